"""Meta-estimators over the density models: the deep belief net, the class-wise classifier, the DBN classifier, the outlier detector and the imputer."""
