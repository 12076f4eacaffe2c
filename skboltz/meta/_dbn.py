"""Deep belief net: a greedy stack of RBMs."""

import copy
import time

import numpy as np
from sklearn import get_config
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    clone,
)
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core._base import check_setting_unchanged, checked_layer_sizes
from ..utils._array_api import (
    check_rows_like_model, dispatched_namespace, fitted_namespace, validated_rows,
)
from ..estimators._gaussian_rbm import GaussianRBM
from ..estimators._rbm import RBM
from ..utils._runtime import (
    CallbackSupportMixin,
    check_memory,
    fit_callback_context,
    make_generator,
    sub_estimator_seeds,
)
from ..utils._sklearn import _fit_context, check_count
from ..core._transactions import all_or_nothing, held_updates, publish
from ..utils._weights import FIT_SAMPLE_WEIGHT_DOC

#: A fitted layer keeps about this many parameter-sized arrays (its published
#: parameters, the training state's, their average and the momentum; measured by the
#: size of a pickled RBM: 4.0 to 4.2).
FITTED_LAYER_COPIES = 4

#: What the verbose line says a layer is doing, by training method.
_ACTIVITY = {"fit": "fitting", "partial_fit": "training one epoch (partial_fit)"}


#: Why a DBN has no score, and what to use (see ``DBN.score``).
_NO_LIKELIHOOD = (
    "DBN has no {name}: a stack of more than one RBM has no tractable "
    "log-likelihood (the prior over the first hidden layer is the marginal of every "
    "layer above it), and a bound would be mistaken for one. To grid-search a DBN, "
    "pass a scorer (GridSearchCV(..., scoring=...)) or search a Pipeline that ends "
    "in a classifier (scored by its accuracy); layers_[0].score(X) is the first "
    "RBM's own log-likelihood, not the DBN's."
)


class _Unavailable:
    """A method an estimator deliberately lacks: reading it raises an AttributeError
    (so ``hasattr`` is False) whose message says why and what to use instead."""

    def __init__(self, message):
        self.message = message

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, instance, owner=None):
        raise AttributeError(self.message.format(name=self.name))


class DBN(CallbackSupportMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Deep belief net trained by greedy layer-wise stacking of RBMs.

    Layer 1 is an :class:`RBM` fitted to ``X``; layer k is an RBM fitted to the hidden
    probabilities P(h = 1 | v) that layer k - 1 gives for the training data. Once a
    layer is trained it is frozen (Hinton, Osindero & Teh, 2006). Every layer is a
    clone of the template ``rbm`` with its ``n_components`` set to the layer's size,
    so all the template's settings (learning strategy, learning rate, epochs, ...)
    apply to every layer; ``first_layer`` gives the bottom layer its own template,
    e.g. a :class:`GaussianRBM` for real-valued (standardised) input under binary
    layers.

    ``transform`` passes data up through all layers; ``sample`` draws from the
    generative model (Gibbs sampling in the top RBM, then a down pass through the
    lower layers' P(v | h)).

    A deep stack has no tractable likelihood (the prior over the first hidden layer is
    the marginal of everything above it), so the DBN offers no ``score_samples`` or
    ``score``: use each layer's (``layers_[0].score_samples`` is the first RBM's own
    likelihood, not the DBN's) or score a downstream classifier instead.

    Parameters
    ----------
    hidden_layer_sizes : array-like of int, default=(256, 128)
        Number of hidden units of each layer, from the bottom up.
    rbm : RBM or None, default=None
        Template of the layers' settings; it is cloned, never fitted. None means
        ``RBM(learning="pcd")``: ``RBM``'s defaults with persistent chains instead of
        CD-1. The layers above the first learn from the hidden probabilities of the
        layer below, often nearly binary and concentrated on few patterns; there CD-1,
        whose chains never leave the data, left models worse than the uniform
        distribution (the fit then stops with ``TrainingDivergedError``) while PCD did
        not, and PCD layers made features as good on the digits.
    first_layer : RBM, GaussianRBM or None, default=None
        Template of the bottom layer (cloned, never fitted), e.g. ``GaussianRBM()``
        for real-valued input; the layers above follow ``rbm``. None uses ``rbm``
        for every layer.
    random_state : int, RandomState instance or None, default=None
        None leaves each layer with the template's ``random_state``; otherwise a
        different seed for each layer is drawn from it.
    verbose : int, default=0
        With a positive value, ``fit`` and ``partial_fit`` print a line when each
        layer starts and one with its time when it is done, and every layer is trained
        with this ``verbose`` (one line per epoch). 0 leaves the layers with the
        template's ``verbose``.

    Attributes
    ----------
    layers_ : list of RBM
        The fitted layers, bottom first; ``layers_[k].n_components`` is
        ``hidden_layer_sizes[k]``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when they are all strings.

    See Also
    --------
    RBM : A single layer.

    References
    ----------
    G. Hinton, S. Osindero, Y.-W. Teh, "A fast learning algorithm for deep belief
    nets", Neural Computation 18, 2006.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skboltz import DBN, RBM
    >>> X = load_digits().data / 16
    >>> dbn = DBN(hidden_layer_sizes=(32, 8), rbm=RBM(n_iter=3), random_state=0).fit(X)
    >>> [layer.components_.shape for layer in dbn.layers_]
    [(32, 64), (8, 32)]
    >>> dbn.transform(X).shape
    (1797, 8)
    >>> dbn.sample(2, n_steps=10).shape
    (2, 64)

    Real-valued input under a Gaussian first layer:

    >>> from sklearn.datasets import load_wine
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skboltz import GaussianRBM
    >>> X = StandardScaler().fit_transform(load_wine().data)
    >>> dbn = DBN(hidden_layer_sizes=(16, 4), first_layer=GaussianRBM(n_iter=5),
    ...           rbm=RBM(n_iter=5), random_state=0).fit(X)
    >>> [type(layer).__name__ for layer in dbn.layers_]
    ['GaussianRBM', 'RBM']
    """

    _parameter_constraints = {
        "hidden_layer_sizes": ["array-like"],
        "rbm": [None, RBM, GaussianRBM],
        "first_layer": [None, RBM, GaussianRBM],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self, hidden_layer_sizes=(256, 128), rbm=None, first_layer=None, random_state=None,
        verbose=0,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.rbm = rbm
        self.first_layer = first_layer
        self.random_state = random_state
        self.verbose = verbose

    # -- construction --------------------------------------------------------------
    def _layer_sizes(self):
        return checked_layer_sizes(self.hidden_layer_sizes)

    def _layer_templates(self):
        """The unfitted model of the bottom layer and of the layers above it."""
        above = RBM(learning="pcd") if self.rbm is None else self.rbm
        return [above if self.first_layer is None else self.first_layer, above]

    def _new_layers(self):
        bottom, above = self._layer_templates()
        sizes = self._layer_sizes()
        templates = [bottom] + [above] * (len(sizes) - 1)
        layers = []
        seeds = sub_estimator_seeds(self.random_state, len(sizes))
        for template, size, seed in zip(templates, sizes, seeds):
            layer = clone(template).set_params(n_components=size)
            if seed is not None:
                layer.set_params(random_state=seed)
            if self.verbose:
                layer.set_params(verbose=self.verbose)
            layers.append(layer)
        return layers

    #: Array API inputs (under ``sklearn.config_context(array_api_dispatch=True)``) go
    #: to the layers, which train on their device (or say why they cannot).
    _passes_array_api_inputs = True

    def _validate_X(self, X, *, reset):
        if dispatched_namespace(X) is not None:  # the rows stay in their namespace
            return validated_rows(self, X, reset=reset)
        return validate_data(
            self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=reset
        )

    # -- training ------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, sample_weight=None):
        """Train the layers greedily, bottom up, each for the template's ``n_iter``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data: values in [0, 1] (standardised real values under a
            Gaussian first layer).
        y : None
            Ignored; present for API consistency.
        {sample_weight} Every layer trains on its input rows with these weights.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        with all_or_nothing(self):
            X = self._validate_X(X, reset=True)
            layers = self._new_layers()
            self._check_memory(X, layers)
            self._train_layers(X, layers, "fit", sample_weight)
            publish(self, {"layers_": layers})
        return self

    fit.__doc__ = fit.__doc__.replace("{sample_weight}", FIT_SAMPLE_WEIGHT_DOC)

    def _check_memory(self, X, layers, *, network=None, owner="DBN"):
        """Refuse at once, naming the layer, a stack that will not fit in memory.

        Every layer's size is known before the first trains, so each is checked first
        (its training arrays and persistent chains, its input and output rows, and
        the fitted layers below it), then the whole stack; ``network``, ``(bytes,
        what)``, adds what the caller holds beside it (a classifier's network). Without
        this the layers below trained for minutes or hours before the first too large
        one was refused.
        """
        if dispatched_namespace(X) is not None:
            return  # rows on a device: its memory is not the host's (nor do the layers'
            # dispatched fits check it)
        n_rows, itemsize = X.shape[0], np.dtype(X.dtype).itemsize
        widths = [X.shape[1], *(layer.n_components for layer in layers)]
        below = 0  # what the fitted layers below keep
        for k, layer in enumerate(layers):
            if not get_config()["skip_parameter_validation"]:
                layer._validate_params()  # as its fit would, before its sizes are read
            # Shape and dtype of the layer's input, without its memory: the rows of
            # the layer below are made only once that layer has trained.
            rows = X if k == 0 else np.broadcast_to(np.zeros((), X.dtype),
                                                     (n_rows, widths[k]))
            n_bytes, what, _ = layer._training_memory(rows, layer._resolve_learning())
            n_bytes += itemsize * n_rows * (widths[k] + widths[k + 1])
            check_memory(
                below + n_bytes,
                f"{owner}: layer {k + 1} of {len(layers)} ({what[0].lower()}{what[1:]}; "
                "with its input and output rows and the layers below)",
                f"Use a smaller hidden_layer_sizes[{k}] (or a smaller batch_size, or "
                "fewer persistent chains, in the layers' RBM).",
            )
            below += FITTED_LAYER_COPIES * itemsize * (widths[k] + 1) * (widths[k + 1] + 1)
        if network is not None:
            extra, extra_what = network
            check_memory(
                below + extra,
                f"{owner}: the whole network (the {len(layers)} fitted layers, "
                f"{' - '.join(map(str, widths))}, and {extra_what})",
                "Use smaller hidden_layer_sizes.",
            )

    @_fit_context(prefer_skip_nested_validation=False)
    def partial_fit(self, X, y=None, sample_weight=None):
        """One epoch for every layer, bottom up, on the current representation of ``X``.

        Each layer is trained with ``RBM.partial_fit`` on the hidden probabilities of
        the layer below *as it is now*. Unlike :meth:`fit`, the lower layers keep
        changing while the upper ones learn, so the upper layers chase a moving input;
        this suits streaming data, and is not the same as greedy training.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data: values in [0, 1] (standardised real values under a
            Gaussian first layer).
        y : None
            Ignored; present for API consistency.
        {sample_weight} Every layer trains on its input rows with these weights.

        Returns
        -------
        self : object
            The updated estimator.
        """
        first_call = not hasattr(self, "layers_")
        if not first_call:
            self._check_structure_unchanged()
        with all_or_nothing(self):
            X = self._validate_X(X, reset=first_call)
            if first_call:
                layers = self._new_layers()
                self._check_memory(X, layers)
                self._train_layers(X, layers, "partial_fit", sample_weight)
                publish(self, {"layers_": layers})
            else:
                # Train shallow copies (each layer's partial_fit publishes a new
                # __dict__ on its copy), held as one update: if an upper layer or a
                # callback fails, the lower layers' random streams and histories, which
                # their copies share, are put back too. (Deep copies also copied every
                # layer's growing history: calls slowed from 7 to 19 ms over 5,000.)
                layers = [copy.copy(layer) for layer in self.layers_]
                with held_updates(layers):
                    self._train_layers(X, layers, "partial_fit", sample_weight)
                self.layers_[:] = layers  # one step; the same list, trained layers
        return self

    partial_fit.__doc__ = partial_fit.__doc__.replace("{sample_weight}",
                                                      FIT_SAMPLE_WEIGHT_DOC)

    def _check_structure_unchanged(self):
        """``partial_fit`` continues the fitted layers: their sizes and the bottom
        layer's kind cannot change between calls."""
        check_setting_unchanged(self, "hidden_layer_sizes", self.hidden_layer_sizes,
                                tuple(layer.n_components for layer in self.layers_))
        template = self.first_layer if self.first_layer is not None else self.rbm
        kind = type(template).__name__ if template is not None else "RBM"
        fitted = type(self.layers_[0]).__name__
        if kind != fitted:
            setting = "first_layer" if self.first_layer is not None else "rbm"
            raise ValueError(
                f"DBN: {setting} is a {kind}, but the bottom layer was fitted as a "
                f"{fitted}, and partial_fit continues the fitted layers. Call fit to "
                "start again with the new setting."
            )

    def _train_layers(self, X, layers, method, sample_weight=None):
        """Call ``method`` ("fit" or "partial_fit") on each layer, bottom up, with the
        rows' ``sample_weight``.

        Each layer is one task for callbacks (the layer's epochs nest inside it) and,
        with ``verbose``, one line when it starts and one when it is done.
        """
        callback_ctx = fit_callback_context(self, max_subtasks=len(layers))
        callback_ctx.call_on_fit_task_begin(estimator=self, X=X)
        H = X
        for k, layer in enumerate(layers):
            name = f"layer {k + 1}/{len(layers)} ({layer.n_components} hidden units)"
            layer_ctx = callback_ctx.subcontext(task_name=f"layer {k + 1}")
            with layer_ctx.propagate_callback_context(layer):
                layer_ctx.call_on_fit_task_begin(estimator=self, X=H)
                if self.verbose:
                    print(f"[DBN] {name}: {_ACTIVITY[method]}", flush=True)
                start = time.perf_counter()
                train = getattr(layer, method)
                fitted = (train(H) if sample_weight is None
                          else train(H, sample_weight=sample_weight))
                H = fitted.transform(H)
                if self.verbose:
                    print(f"[DBN] {name}: done in {time.perf_counter() - start:.2f}s", flush=True)
                layer_ctx.call_on_fit_task_end(estimator=self, X=H)
        callback_ctx.call_on_fit_task_end(
            estimator=self, X=X, reconstruction_attributes={"layers_": layers}
        )

    # -- inference -----------------------------------------------------------------
    def transform(self, X):
        """Hidden probabilities of the top layer, passing ``X`` up through every layer.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Visible rows.

        Returns
        -------
        H : ndarray of shape (n_samples, hidden_layer_sizes[-1])
            P(h = 1 | input) of the top layer, in the dtype of ``X``.
        """
        check_is_fitted(self)
        check_rows_like_model(self, X, self.layers_[0], "transform")
        H = self._validate_X(X, reset=False)
        for layer in self.layers_:
            H = layer.transform(H)
        return H

    def sample(self, n_samples=1, random_state=None, n_steps=1000, down_pass="sample"):
        """Draw visible samples from the deep belief net.

        The top RBM is sampled by ``n_steps`` steps of block Gibbs sampling (chains
        started from its training data's rates); its visible states are then passed
        down through the lower layers' conditionals P(v | h).

        Parameters
        ----------
        n_samples : int, default=1
            Number of samples (independent chains).
        random_state : int, RandomState, Generator or None, default=None
            None uses the estimator's ``random_state`` (so an int seed gives the same
            samples on every call).
        n_steps : int, default=1000
            Gibbs steps in the top RBM.
        down_pass : {"sample", "mean"}, default="sample"
            "sample" draws states at every layer (real values at a Gaussian first
            layer), so the result is a true sample of the generative model; "mean"
            propagates the conditional means (P(v = 1 | h) for binary units) down from
            the top layer's sample, giving smoother images (the expected visible state
            given the top sample, for one layer).

        Returns
        -------
        samples : ndarray of shape (n_samples, `n_features_in_`)
            Visible states ("sample") or conditional means ("mean").
        """
        check_is_fitted(self)
        n_samples = check_count(n_samples, "n_samples", 1)
        n_steps = check_count(n_steps, "n_steps", 0)
        if down_pass not in ("sample", "mean"):
            raise ValueError(f"down_pass must be 'sample' or 'mean', got {down_pass!r}.")
        if fitted_namespace(self.layers_[0]) is not None:
            raise NotImplementedError(
                "DBN.sample is not available for a net fitted under array API dispatch: "
                "its down pass runs on NumPy arrays only. Fit the DBN on NumPy arrays "
                "to sample from it, or sample its top layer (dbn.layers_[-1].sample).")
        rng = make_generator(self.random_state if random_state is None else random_state)
        H = self.layers_[-1].sample(n_samples, random_state=rng, n_steps=n_steps)
        for layer in reversed(self.layers_[:-1]):
            H = layer._visible_given_hidden(H, rng, sample=down_pass == "sample")
        return H

    # -- sklearn plumbing ----------------------------------------------------------
    #: Absent (``hasattr(dbn, "score")`` is False, so GridSearchCV asks for a scorer),
    #: but asking for it says why and what to use.
    score = _Unavailable(_NO_LIKELIHOOD)
    score_samples = _Unavailable(_NO_LIKELIHOOD)

    @property
    def _n_features_out(self):
        return self.layers_[-1].n_components

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        # array API inputs go to the layers: supported where every layer supports them
        tags.array_api_support = all(get_tags(layer).array_api_support
                                     for layer in self._layer_templates())
        return tags


__all__ = ["DBN"]
