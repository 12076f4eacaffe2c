"""Classification RBM: the joint model of features, class and hidden units, and p(y | x).

The model of Larochelle & Bengio ("Classification using discriminative restricted
Boltzmann machines", ICML 2008): binary visible units x (the features), one softmax
class unit y in {1, ..., K} (one-hot e_y) and binary hidden units h, with

    E(y, x, h) = -h^T W x - b^T x - c^T h - d^T e_y - h^T U e_y,

``weights`` W of shape (n_hidden, n_features) like ``components_`` and
``class_weights`` U of shape (n_hidden, n_classes). Summing h out gives the class
posterior in closed form (no sampling), with o_yj(x) = c_j + U_jy + (W x)_j,

    p(y | x) = exp(d_y + sum_j softplus(o_yj(x)))
               / sum_k exp(d_k + sum_j softplus(o_kj(x))),

and summing y and h out the free energy of the features,

    F(x) = -b^T x - log sum_y exp(d_y + sum_j softplus(o_yj(x))),
    log p(x) = -F(x) - log Z.

For the restricted learning rule and its samplers the model is an RBM whose visible
layer is the pair (x, y): :class:`AugmentedClassRBM`, the training form, packs the
parameters like any restricted model's (:mod:`skboltz.models._restricted_energy`) with the
class units as extra visible columns (:class:`ClassRBMLayout`): its visible layer is
two groups, binary features and a softmax class (:mod:`skboltz.units._layers`).

Pure functions of numpy arrays and small read-only objects; no scikit-learn objects.
"""

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from ..utils._capabilities import (
    ANNEALING,
    BINARY,
    ENUMERATION,
    RESTRICTED,
    SOFTMAX,
    Capabilities,
)
from ..utils._energy import bernoulli_sample, sigmoid, softplus, softplus_row_sums
from ..units._layers import BinaryUnits, LayerGroups, SoftmaxUnits
from ..utils._noise import Noise
from ._rbm_energy import RBMView
from ._restricted_energy import RestrictedLayout, RestrictedTrainingForm, RestrictedView

#: Numbers per (rows x classes x hidden units) block of the inference paths: bounds
#: their memory (8 MB in float64) whatever the number of rows.
INFERENCE_BLOCK = 2**20


def softmax_rows(scores):
    """Each row of ``scores`` turned into probabilities (a new array, float64 or the
    scores' dtype), without overflow."""
    probability = scores - scores.max(axis=1, keepdims=True)
    np.exp(probability, out=probability)
    probability /= probability.sum(axis=1, keepdims=True)
    return probability


def sigmoid_of_negative(t):
    """sigmoid(-t) = 1 / (1 + exp(t)), without overflow warnings (a new array)."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(t))


def draw_categorical(probability, uniform, out):
    """Fill ``out`` (rows of K columns) with one-hot draws from each row of
    ``probability`` (rows that need not be normalised), by inverting the cumulative
    sums with one uniform number per row (``uniform``, shape (n_rows, 1))."""
    cumulative = np.cumsum(probability, axis=1)
    threshold = uniform * cumulative[:, -1:]
    chosen = np.minimum((cumulative < threshold).sum(axis=1), probability.shape[1] - 1)
    out[...] = 0
    out[np.arange(out.shape[0]), chosen] = 1
    return out


@dataclass(frozen=True, eq=False, init=False)
class ClassRBMView(RestrictedView):
    """Read-only view of a classification RBM (of :class:`~skboltz.RBMClassifier`).

    Its :class:`ModelView`. The model is p(y, x, h) proportional to
    exp(h^T W x + b^T x + c^T h + d^T e_y + h^T U e_y) over binary features x, a
    softmax class unit y (one of K) and binary hidden units h (Larochelle & Bengio,
    "Classification using discriminative restricted Boltzmann machines", ICML 2008).
    As a density it is a model of the features: sampler states are feature vectors x,
    with the class and the hidden units summed out in closed form
    (:meth:`free_energy`), and exact enumeration lists the
    states of the smaller of the feature and hidden layers, once per class.

    Parameters
    ----------
    weights : ndarray of shape (n_hidden, n_features)
        Weights W between the hidden units and the features
        (``RBMClassifier.components_``).
    visible_bias : ndarray of shape (n_features,)
        Feature biases b (``RBMClassifier.intercept_visible_``).
    hidden_bias : ndarray of shape (n_hidden,)
        Hidden biases c (``RBMClassifier.intercept_hidden_``).
    class_weights : ndarray of shape (n_hidden, n_classes)
        Weights U between the hidden units and the class units
        (``RBMClassifier.class_weights_``).
    class_bias : ndarray of shape (n_classes,)
        Class biases d (``RBMClassifier.intercept_class_``).

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.partition import Exact
    >>> from skboltz.views import ClassRBMView
    >>> rng = np.random.default_rng(0)
    >>> view = ClassRBMView(rng.normal(size=(3, 4)), np.zeros(4), np.zeros(3),
    ...                     rng.normal(size=(3, 2)), np.zeros(2))
    >>> X = np.array([[0, 1, 1, 0], [1, 1, 0, 0]])
    >>> view.class_probability(X).sum(axis=1)
    array([1., 1.])
    >>> log_p = -view.free_energy(X) - Exact().estimate(view).value  # log p(x)
    >>> bool(np.all(log_p < 0))
    True
    """

    class_weights: np.ndarray
    class_bias: np.ndarray

    #: Binary features and hidden units, a softmax class unit: the samplers of the
    #: restricted learning rule, exact enumeration and annealing (no mean field).
    capabilities = Capabilities(
        units=(("visible", BINARY), ("class", SOFTMAX), ("hidden", BINARY)),
        operations={RESTRICTED, ENUMERATION, ANNEALING},
    )
    #: Its annealing chains (the class summed out) take one base model.
    anneals_several_bases = False
    #: ``X`` holds the features.
    input_units = BinaryUnits

    def __init__(self, weights, visible_bias, hidden_bias, class_weights, class_bias):
        super().__init__(weights, BinaryUnits(visible_bias), BinaryUnits(hidden_bias))
        object.__setattr__(self, "class_weights", class_weights)
        object.__setattr__(self, "class_bias", class_bias)

    @property
    def n_classes(self):
        """Number of classes K."""
        return self.class_bias.shape[0]

    @property
    def n_state_units(self):
        """Units a sampler state holds: the features (class and hidden units summed out)."""
        return self.n_visible

    @property
    def n_enumerated_units(self):
        """Units whose states exact enumeration lists (per class): the smaller layer."""
        return min(self.n_visible, self.n_hidden)

    # -- the class posterior ---------------------------------------------------------
    def _hidden_inputs_by_class(self, V):
        """Yield ``(rows, O)`` for blocks of rows: O[n, k, j] = c_j + U_jk + (W x_n)_j,
        the hidden inputs of row n with class k, in the view's dtype."""
        V = V.astype(self.dtype, copy=False) if not hasattr(V, "tocsr") else V
        block = max(1, INFERENCE_BLOCK // max(1, self.n_classes * self.n_hidden))
        class_inputs = self.class_weights.T + self.hidden_bias  # (K, H)
        for start in range(0, V.shape[0], block):
            rows = slice(start, min(start + block, V.shape[0]))
            feature_input = np.asarray(V[rows] @ self.weights.T)
            yield rows, feature_input[:, None, :] + class_inputs

    def class_log_scores(self, V):
        """Compute each class's unnormalised log-probability given each row.

        ``z_k(x) = d_k + sum_j softplus(c_j + U_jk + (W x)_j)``, so that p(y | x) is
        the softmax of z(x) and ``-F(x) = b^T x + log sum_k exp(z_k(x))``.

        Parameters
        ----------
        V : {ndarray, sparse matrix} of shape (n_rows, n_features)
            Feature rows.

        Returns
        -------
        scores : ndarray of shape (n_rows, n_classes)
            The score z_k(x) of each row and class.
        """
        scores = np.empty((V.shape[0], self.n_classes), dtype=self.dtype)
        for rows, inputs in self._hidden_inputs_by_class(V):
            flat = inputs.reshape(-1, self.n_hidden)
            sums = softplus_row_sums(flat, overwrite=True)
            scores[rows] = sums.reshape(-1, self.n_classes)
        scores += self.class_bias
        return scores

    def class_probability(self, V):
        """Compute the exact class posterior p(y | x) of each row (no sampling).

        Parameters
        ----------
        V : {ndarray, sparse matrix} of shape (n_rows, n_features)
            Feature rows.

        Returns
        -------
        probability : ndarray of shape (n_rows, n_classes)
            The probability p(y = k | x); each row sums to 1.
        """
        return softmax_rows(self.class_log_scores(V))

    def hidden_probability(self, V):
        """Compute P(h_j = 1 | x) with the class summed out.

        ``sum_k p(k | x) sigmoid(c_j + U_jk + (W x)_j)``: the hidden units' marginals
        given the features alone, exactly.

        Parameters
        ----------
        V : {ndarray, sparse matrix} of shape (n_rows, n_features)
            Feature rows.

        Returns
        -------
        probability : ndarray of shape (n_rows, n_hidden)
            The hidden units' marginals.
        """
        marginals = np.empty((V.shape[0], self.n_hidden), dtype=self.dtype)
        for rows, inputs in self._hidden_inputs_by_class(V):
            flat = inputs.reshape(-1, self.n_hidden)
            scores = softplus_row_sums(flat).reshape(-1, self.n_classes) + self.class_bias
            weights = softmax_rows(scores)
            np.einsum("nk,nkj->nj", weights, sigmoid(inputs, out=inputs),
                      out=marginals[rows])
        return marginals

    def hidden_probability_given_class(self, V, Y):
        """Compute P(h_j = 1 | x, y) for paired rows of features and one-hot classes.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_features)
            Feature rows.
        Y : ndarray of shape (n_rows, n_classes)
            One-hot class rows (or class probabilities, for a mean-field value).

        Returns
        -------
        probability : ndarray of shape (n_rows, n_hidden)
            The hidden units' conditional probabilities.
        """
        return sigmoid(np.asarray(V @ self.weights.T + Y @ self.class_weights.T
                                  + self.hidden_bias))

    def free_energy(self, V):
        """Compute F(x), the free energy of each feature row with y and h summed out.

        ``log p(x) = -F(x) - log Z`` (see the module docstring).

        Parameters
        ----------
        V : {ndarray, sparse matrix} of shape (n_rows, n_features)
            Feature rows.

        Returns
        -------
        free_energy : ndarray of shape (n_rows,)
            F(x) of each row.
        """
        scores = self.class_log_scores(V)
        return -np.asarray(V @ self.visible_bias).ravel() - logsumexp(scores, axis=1)

    def energy(self, V, Y, H):
        """Compute the joint energy E(y, x, h) of paired rows.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_features)
            Feature rows.
        Y : ndarray of shape (n_rows, n_classes)
            One-hot class rows.
        H : ndarray of shape (n_rows, n_hidden)
            Hidden rows.

        Returns
        -------
        energy : ndarray of shape (n_rows,)
            E(y, x, h) of each triple.
        """
        return -(np.einsum("nj,nj->n", H, V @ self.weights.T + Y @ self.class_weights.T)
                 + V @ self.visible_bias + H @ self.hidden_bias + Y @ self.class_bias)

    def log_unnormalized(self, S):
        return -self.free_energy(S)

    # -- sampling --------------------------------------------------------------------
    def sample_class_and_hidden(self, V, rng):
        """Draw (y, h) from p(y, h | x) for each row: y from the exact posterior, then h.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_features)
            Feature rows.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        Y : ndarray of shape (n_rows, n_classes)
            One-hot class draws.
        H : ndarray of shape (n_rows, n_hidden)
            Binary hidden draws.
        """
        Y = np.empty((V.shape[0], self.n_classes), dtype=self.dtype)
        draw_categorical(self.class_probability(V), rng.random((V.shape[0], 1)), Y)
        H = bernoulli_sample(self.hidden_probability_given_class(V, Y), rng)
        return Y, H

    def class_probability_given_hidden(self, H):
        """Compute p(y | h) (the softmax of d + U^T h) for each row of hidden states.

        Parameters
        ----------
        H : ndarray of shape (n_rows, n_hidden)
            Hidden states.

        Returns
        -------
        probability : ndarray of shape (n_rows, n_classes)
            Each row sums to 1.
        """
        return softmax_rows(H @ self.class_weights + self.class_bias)

    def sample_hidden(self, V, rng):
        # (y, h) drawn jointly given x: y from the exact posterior, then h. A Gibbs
        # step x -> (y, h) -> x leaves p(y, x, h), so the feature chain p(x), invariant.
        return self.sample_class_and_hidden(V, rng)[1]

    # -- annealing ---------------------------------------------------------------------
    def interpolate(self, beta, base_bias):
        # p_A(x)^(1 - beta) p(y, x, h)^beta with p_A the independent model of the
        # features with biases base_bias (y and h uniform under it): every parameter
        # scaled by beta, the feature biases moved towards the base's.
        base = np.asarray(base_bias, dtype=np.float64)[: self.n_visible]
        return ClassRBMView(
            beta * self.weights,
            (1.0 - beta) * base + beta * self.visible_bias,
            beta * self.hidden_bias,
            beta * self.class_weights,
            beta * self.class_bias,
        )

    def annealing_base(self, data_rates, kind="data"):
        """Return None: the one base model of annealing is the features' own.

        The class and the hidden units are summed out of the annealing chains, so
        their base is :meth:`base_bias_from_rates` (independent features at the data's
        rates), whatever ``kind``.

        Parameters
        ----------
        data_rates : ndarray of shape (n_features,) or None
            Mean of each feature over the training data.
        kind : str, default="data"
            Ignored.

        Returns
        -------
        base_bias : None
            No base over all units.
        """
        return None

    def annealing(self, base_bias, n_chains, rng, dtype=np.float32):
        """Return annealed-importance-sampling chains from the base model to this one.

        An optional member of the view protocol: :class:`~skboltz.partition.AIS` runs
        these chains when present (otherwise :meth:`interpolate`,
        :meth:`log_unnormalized` and :meth:`gibbs_step` in float64).

        Parameters
        ----------
        base_bias : ndarray of shape (n_features,)
            Biases of the independent base model of the features.
        n_chains : int
            Number of chains.
        rng : numpy.random.Generator
            Seeds the chains' random numbers.
        dtype : float32 or float64, default=float32
            Type of the elementwise work (log weights are accumulated in float64).

        Returns
        -------
        chains : ClassRBMAnnealing
            With ``start_from_base``, ``set_states``, ``add_log_ratio`` and
            ``transition``.
        """
        return ClassRBMAnnealing(self, base_bias, n_chains, rng, dtype)

    def base_log_partition(self, base_bias):
        # Independent features, and K classes times 2**n_hidden hidden states of
        # energy 0.
        base = np.asarray(base_bias, dtype=np.float64)[: self.n_visible]
        return float(softplus(base).sum() + np.log(self.n_classes)
                     + self.n_hidden * np.log(2.0))

    # -- exact enumeration -------------------------------------------------------------
    def class_rbm(self, k):
        """Return the RBM of the features and hidden units with the class fixed at k.

        Its hidden biases are c + U[:, k]; Z = sum_k exp(d_k) Z_k of these RBMs.

        Parameters
        ----------
        k : int
            The class index.

        Returns
        -------
        view : RBMView
            The class's RBM.
        """
        return RBMView(self.weights, self.visible_bias,
                       self.hidden_bias + self.class_weights[:, k])

    def enumerate_log_weights(self, chunk_size):
        # Z = sum_k exp(d_k) Z_k: each class's RBM enumerated, shifted by d_k.
        for k in range(self.n_classes):
            shift = float(self.class_bias[k])
            for log_weights in self.class_rbm(k).enumerate_log_weights(chunk_size):
                yield log_weights + shift

    def with_fewer_enumerated_units(self, n_units):
        """Return the view with only the first ``n_units`` units of the enumerated layer.

        An optional member of the view protocol (for
        :class:`~skboltz.partition.Exact`'s forecast of its cost).

        Parameters
        ----------
        n_units : int
            Units of the smaller layer to keep.

        Returns
        -------
        view : ClassRBMView
            A view over slices of the same arrays.
        """
        if self.n_visible <= self.n_hidden:
            return ClassRBMView(self.weights[:, :n_units], self.visible_bias[:n_units],
                                self.hidden_bias, self.class_weights, self.class_bias)
        return ClassRBMView(self.weights[:n_units], self.visible_bias,
                            self.hidden_bias[:n_units], self.class_weights[:n_units],
                            self.class_bias)

    def _training_form(self):
        """The training form of these parameters (a new :class:`AugmentedClassRBM`)."""
        return AugmentedClassRBM.from_view(self)


class ClassRBMLayout(RestrictedLayout):
    """Named blocks of a classification RBM's packed parameters (and velocity).

    The array has shape (n_hidden + 1, n_features + n_classes + 1): an RBM's layout
    (:class:`~skboltz.models._restricted_energy.RestrictedLayout`) whose visible layer is the
    pair (x, y), the class units after the features::

        [ W  (n_hidden, n_features) | U  (n_hidden, n_classes) | c  hidden biases ]
        [ b  feature biases         | d  class biases          | constant         ]

    The class attributes are the RBM's blocks of the joint visible layer:
    ``weights`` (W and U, where weight decay acts), ``visible_bias`` (b and d),
    ``hidden_bias``, ``constant``. An instance, for a number of classes, names the
    blocks of the features and of the classes apart.

    Parameters
    ----------
    n_classes : int
        Number of class units K.
    """

    def __init__(self, n_classes):
        super().__init__()
        k = n_classes
        self.n_classes = k
        #: Blocks of the parameters.
        self.feature_weights = np.s_[:-1, : -1 - k]
        self.class_weights = np.s_[:-1, -1 - k : -1]
        self.feature_bias = np.s_[-1, : -1 - k]
        self.class_bias = np.s_[-1, -1 - k : -1]
        #: Of rows of joint visible states: the features and the class units.
        self.features = np.s_[..., : -1 - k]
        self.classes = np.s_[..., -1 - k : -1]

    def pack(self, weights, visible_bias, hidden_bias, class_weights, class_bias, dtype):
        """A new packed array holding the five blocks (the constant coupling 0)."""
        weights = np.asarray(weights)
        n_hidden, n_features = weights.shape
        params = np.zeros((n_hidden + 1, n_features + self.n_classes + 1), dtype=dtype)
        params[self.feature_weights] = weights
        params[self.class_weights] = class_weights
        params[self.hidden_bias] = hidden_bias
        params[self.feature_bias] = visible_bias
        params[self.class_bias] = class_bias
        return params


_BINARY = BinaryUnits(np.zeros(0))


def joint_visible_layer(n_features, n_classes):
    """The joint visible layer (x, y) of a classification RBM: binary features, then
    one softmax group of the classes (the layers' parameters are bound later)."""
    return LayerGroups([BinaryUnits(np.zeros(n_features)),
                        SoftmaxUnits(np.zeros(n_classes), (n_classes,))])


class AugmentedClassRBM(RestrictedTrainingForm):
    """Training form of a classification RBM: an RBM over the joint visible layer (x, y).

    The generic :class:`~skboltz.models._restricted_energy.RestrictedTrainingForm` whose
    visible layer is two groups (:func:`joint_visible_layer`): the binary features and
    one softmax class unit. The packed parameters follow :class:`ClassRBMLayout`; rows
    of visible states are ``[x, e_y, 1]`` (features, one-hot class, the constant unit).
    Hidden inputs, hidden draws, statistics and energies take the class units
    linearly, like features, and the visible draws draw the class as one of K; so the
    RBM's learning strategies (CD, PCD, parallel tempering) sample the joint model
    through it unchanged.

    :meth:`positive_pass` is the data's side of a minibatch's gradient (the exact
    p(y | x) and the gradient of log p(y | x) among it), :meth:`gradient_step` the
    product that gives the step with the negative phase's rows.

    Parameters
    ----------
    params : ndarray of shape (n_hidden + 1, n_features + n_classes + 1)
        The packed parameters (the constant coupling is set here).
    n_classes : int
        Number of classes K.
    """

    def __init__(self, params, n_classes):
        n_features = params.shape[1] - 1 - n_classes
        super().__init__(params, joint_visible_layer(n_features, n_classes), _BINARY,
                         ClassRBMView, ClassRBMLayout(n_classes))
        self.n_classes = n_classes
        self.n_features = n_features

    @classmethod
    def from_view(cls, view):
        """The training form of a :class:`ClassRBMView`'s parameters (a new array)."""
        layout = ClassRBMLayout(view.n_classes)
        return cls(layout.pack(view.weights, view.visible_bias, view.hidden_bias,
                               view.class_weights, view.class_bias, view.dtype),
                   view.n_classes)

    def view(self):
        """The :class:`ClassRBMView` of the current parameters (no copies)."""
        p, layout = self.params, self.layout
        return ClassRBMView(p[layout.feature_weights], p[layout.feature_bias],
                            p[layout.hidden_bias], p[layout.class_weights],
                            p[layout.class_bias])

    def reconstruction_error(self, X):
        """Mean squared error of the mean-field reconstruction of feature rows X."""
        view = self.view()
        reconstruction = view.visible_probability(view.hidden_probability(X)) - X
        return float(np.mean(np.square(reconstruction), dtype=np.float64))

    # -- the minibatch gradient --------------------------------------------------------
    def positive_pass(self, batch, codes, work, *, generative_weight, unlabelled_weight,
                      scale):
        """The exact class posterior of a minibatch and its rows' side of the gradient.

        Fills ``work.stacked[:n]`` with the rows ``[x, pi, 1]`` (pi = e_y for labelled
        rows, ``codes`` >= 0, and p(y | x) for unlabelled ones, ``codes`` == -1) and
        ``work.coefficients[:n]`` with coefficients C such that ``C^T @ rows``, plus the
        returned corrections of the class blocks, is ``scale`` times the rows' terms:
        per labelled row (with s_kj = sigmoid(O[k, j]), O[k, j] = c_j + U_jk + (W x)_j,
        and p_k = p(k | x))

        - d log p(y | x): W gets (s_y - sum_k p_k s_k) x^T, c the same vector, U[:, k]
          (1[k = y] - p_k) s_k, d e_y - p (exact);
        - ``generative_weight`` alpha times the data side of log p(x, y): W gets
          s_y x^T, c s_y, U s_y e_y^T, b x, d e_y;

        and per unlabelled row ``unlabelled_weight`` beta times the data side of
        log p(x), the class summed out: W gets (sum_k p_k s_k) x^T, c the same, U[:, k]
        p_k s_k, b x, d p. The model's side of the generative terms (alpha per
        labelled row and beta per unlabelled one of the model's expected statistics)
        is the caller's, below the rows (see :meth:`gradient_step`).

        The pass computes u = 1 + exp(-O) for every row and class at once, (n, K, H),
        in the minibatch's dtype, as a product: exp(-O) = exp(-(c + W x)) exp(-U^T),
        so the exponential is taken of the two small factors only. Then, since
        softplus(O) = O + log u and sum_j O[k, j] = sum_j (c + W x)_j + sum_j U_jk, the
        class scores need one logarithm per number (summed over j by a matrix-vector
        product), and the sigmoids are 1 / u. Where a factor overflows (|O| beyond
        ~88 in float32) those rows are computed again in float64.

        Parameters
        ----------
        batch : ndarray of shape (n, n_features)
            The minibatch's feature rows.
        codes : ndarray of int, shape (n,)
            Class index of each row, -1 for unlabelled rows.
        work : ClassRBMWork
            Buffers for minibatches of at least n rows.
        generative_weight, unlabelled_weight : float
            alpha and beta above.
        scale : float or ndarray of shape (n,)
            Every term's factor (the step divided by the minibatch's rows), or each
            row's (times its weight, in a weighted fit).

        Returns
        -------
        class_weights_step : ndarray of shape (n_hidden, n_classes)
            What the U block of ``C^T @ rows`` lacks.
        class_bias_step : ndarray of shape (n_classes,)
            What the d block lacks.
        probability : ndarray of shape (n, n_classes), float64
            p(y | x) of each row.
        """
        n_rows, n_hidden, n_features = codes.shape[0], self.n_hidden, self.n_features
        params, dtype = self.params, self.params.dtype
        classes = np.s_[n_features : n_features + self.n_classes]
        rows, row_index = work.stacked[:n_rows], work.row_index[:n_rows]
        rows[:, :n_features] = batch
        rows[:, classes] = 0
        # c + W x of every row (the class units are 0 for now)
        hidden_input = np.dot(rows, params.T, out=work.hidden[:n_rows])
        with np.errstate(over="ignore", invalid="ignore"):
            feature_factor = np.negative(hidden_input[:, :n_hidden],
                                         out=work.feature_factor[:n_rows])
            np.exp(feature_factor, out=feature_factor)
            class_factor = np.negative(params[:n_hidden, classes].T, out=work.class_factor)
            class_offset = np.dot(class_factor, work.ones)  # -sum_j U_jk
            np.exp(class_factor, out=class_factor)
            sigmoid = np.multiply(feature_factor[:, None, :], class_factor[None],
                                  out=work.sigmoid[:n_rows])
        sigmoid += work.one  # u = 1 + exp(-O)
        log_inverse = np.log(sigmoid, out=work.scratch[:n_rows])
        scores = np.dot(log_inverse.reshape(-1, n_hidden), work.ones).reshape(n_rows, -1)
        scores = scores.astype(np.float64)
        # sigmoid(O) = 1 / u, as a division (np.reciprocal took twice as long)
        np.divide(work.one, sigmoid, out=sigmoid)
        if not np.isfinite(scores.sum()):  # a factor overflowed
            self._stable_rows(hidden_input[:, :n_hidden], scores, sigmoid)
        scores += params[-1, classes]
        scores -= class_offset
        probability = softmax_rows(scores)
        # lambda p, with lambda = scale for labelled rows and -scale beta for unlabelled
        # ones: r = sum_k lambda p_k s_k is what every row's coefficient subtracts.
        per_row = np.ndim(scale) == 1  # a weighted fit: each row its own factor
        weighted = probability * (scale[:, None] if per_row else scale)
        labelled = codes >= 0
        all_labelled = bool(labelled.all())
        unlabelled = None
        if not all_labelled:
            unlabelled = ~labelled
            weighted[unlabelled] *= -unlabelled_weight
        weighted = weighted.astype(dtype)
        # r (n, H) and sum_n lambda p_k s_k (K, H): two stacks of small products.
        mixed = np.matmul(weighted[:, None, :], sigmoid)[:, 0]
        class_sums = np.matmul(weighted.T[:, None, :], sigmoid.transpose(1, 0, 2))[:, 0]
        coefficients = work.coefficients[:n_rows]
        own = coefficients[:, :n_hidden]
        pi = rows[:, classes]
        if all_labelled and not per_row:
            np.multiply(sigmoid[row_index, codes],
                        dtype.type(scale * (1 + generative_weight)), out=own)
            coefficients[:, n_hidden] = scale * generative_weight
            pi[row_index, codes] = 1
            class_bias_step = np.bincount(codes, minlength=self.n_classes) - \
                probability.sum(axis=0)
        else:
            factor = np.where(labelled, scale * (1 + generative_weight), 0.0)
            np.multiply(sigmoid[row_index, np.maximum(codes, 0)],
                        factor.astype(dtype)[:, None], out=own)
            coefficients[:, n_hidden] = np.where(labelled, generative_weight,
                                                 unlabelled_weight) * scale
            pi[labelled, codes[labelled]] = 1
            if unlabelled is not None:
                pi[unlabelled] = probability[unlabelled]
            if per_row:  # the factors are in: sum_n scale_n (e_y - p) over labelled rows
                class_bias_step = (
                    np.bincount(codes[labelled], weights=scale[labelled],
                                minlength=self.n_classes)
                    - (probability[labelled] * scale[labelled, None]).sum(axis=0))
            else:
                class_bias_step = (np.bincount(codes[labelled], minlength=self.n_classes)
                                   - probability[labelled].sum(axis=0))
        own -= mixed
        # U: C^T pi gives sum_n C_n pi_n^T; the terms need sum_n r_n pi_n^T - class_sums
        # more. d: C^T gives alpha e_y and beta p; the labelled rows need e_y - p more.
        class_weights_step = mixed.T @ pi
        class_weights_step -= class_sums.T
        if not per_row:
            class_bias_step = class_bias_step * scale
        return class_weights_step, class_bias_step.astype(dtype), probability

    def positive_hidden_input(self, work, n_rows):
        """The hidden inputs of the positive rows ``[x, pi, 1]`` after
        :meth:`positive_pass`: its c + W x plus the class part U pi (a small product),
        in place in ``work.hidden``."""
        classes = np.s_[self.n_features : self.n_features + self.n_classes]
        hidden_input = work.hidden[:n_rows]
        hidden_input += work.stacked[:n_rows, classes] @ self.params[:, classes].T
        return hidden_input

    def _stable_rows(self, hidden_input, scores, sigmoid):
        """The scores' sums of log(1 + exp(-O)) and sigmoid(O) again, in float64
        without overflow, for the rows where the fast pass overflowed."""
        rows = np.flatnonzero(~np.isfinite(scores).all(axis=1))
        class_weights = self.params[: self.n_hidden, self.n_features : -1].T
        minus_o = -(hidden_input[rows, None, :].astype(np.float64)
                    + class_weights[None].astype(np.float64))
        sigmoid[rows] = sigmoid_of_negative(minus_o)
        # log(1 + exp(t)) = max(t, 0) + log(1 + exp(-|t|))
        scores[rows] = softplus_row_sums(
            minus_o.reshape(-1, minus_o.shape[-1]), overwrite=True
        ).reshape(len(rows), -1)

    def gradient_step(self, work, n_rows, class_weights_step, class_bias_step,
                      extra=None):
        """The minibatch's gradient step from the stacked rows and their coefficients.

        ``work.stacked[:n_rows]`` holds the positive rows (:meth:`positive_pass`) and
        the negative phase's rows below them, ``work.coefficients[:n_rows]`` their
        coefficients; one product gives every block, the class blocks get their
        corrections, and ``extra`` (statistics in the packed layout, already scaled)
        is added if given. U's component shared by every hidden unit moves each class
        score n_hidden times as fast as the class bias does: its step is divided by
        n_hidden (a fixed preconditioner, so the fixed points stay; without it a few
        hundred hidden units made the steps oscillate on small data sets).

        Returns
        -------
        gradient : ndarray, shaped like the parameters
            ``work.gradient``, the step.
        """
        n_hidden = self.n_hidden
        classes = np.s_[self.n_features : self.n_features + self.n_classes]
        coefficients, rows = work.coefficients[:n_rows], work.stacked[:n_rows]
        gradient = np.dot(coefficients.T, rows, out=work.gradient)
        if extra is None:  # sum_j (C^T R)[j, k] = (C 1)^T R[:, k], from the small arrays
            shared = coefficients[:, :n_hidden].sum(axis=1) @ rows[:, classes]
        else:
            gradient += extra
            shared = gradient[:n_hidden, classes].sum(axis=0)
        shared += work.ones @ class_weights_step
        shared *= (1.0 - 1.0 / n_hidden) / n_hidden
        class_weights_step -= shared
        gradient[:n_hidden, classes] += class_weights_step
        gradient[-1, classes] += class_bias_step
        return gradient


class ClassRBMWork:
    """Buffers of a minibatch's gradient (:meth:`AugmentedClassRBM.positive_pass` and
    :meth:`~AugmentedClassRBM.gradient_step`) for up to ``n_positive`` positive rows
    and ``n_negative`` negative rows: the stacked rows (the positive ones first), their
    hidden inputs and coefficients, the discriminative pass's (rows, classes, hidden)
    arrays and the gradient step. Made once and reused while the sizes fit."""

    def __init__(self, n_positive, n_negative, n_features, n_classes, n_hidden, dtype):
        self.key = (n_positive, n_negative, n_features, n_classes, n_hidden,
                    np.dtype(dtype))
        n_rows, n_visible = n_positive + n_negative, n_features + n_classes + 1
        self.stacked = np.empty((n_rows, n_visible), dtype)
        self.stacked[:, -1] = 1
        self.hidden = np.empty((n_rows, n_hidden + 1), dtype)
        self.coefficients = np.empty((n_rows, n_hidden + 1), dtype)
        self.gradient = np.empty((n_hidden + 1, n_visible), dtype)
        self.sigmoid = np.empty((n_positive, n_classes, n_hidden), dtype)
        self.scratch = np.empty((n_positive, n_classes, n_hidden), dtype)
        self.feature_factor = np.empty((n_positive, n_hidden), dtype)
        self.class_factor = np.empty((n_classes, n_hidden), dtype)
        self.ones = np.ones(n_hidden, dtype)
        self.one = np.asarray(1, dtype)
        self.row_index = np.arange(n_positive)

    def fits(self, n_positive, n_negative, n_features, n_classes, n_hidden, dtype):
        """Whether these buffers serve minibatches of this size."""
        return (n_positive <= self.key[0] and n_negative <= self.key[1]
                and (n_features, n_classes, n_hidden, np.dtype(dtype)) == self.key[2:])




class ClassRBMAnnealing:
    """The chains of annealed importance sampling (AIS) on a classification RBM.

    The states are feature vectors x (the class and the hidden units summed out), on
    the path from an independent model with biases a (beta = 0) to the model
    (beta = 1), with O[k, j] = c_j + U_jk + (W x)_j:

        log p*_beta(x) = ((1 - beta) a + beta b) . x
                         + log sum_k exp(beta d_k + sum_j softplus(beta O[k, j])).

    :meth:`add_log_ratio` adds ``log p*_beta'(x) - log p*_beta(x)`` of the states to
    float64 log weights; :meth:`transition` draws (y, h) given x, then x given h, at a
    beta. The increment is computed as differences, so that its rounding scales with
    the step: with softplus(t) = max(t, 0) + log(1 + exp(-|t|)) and beta >= 0, each
    class's sum over j changes by (beta' - beta) sum_j max(O, 0) + sum_j log((1 +
    exp(-beta' |O|)) / (1 + exp(-beta |O|))), and the log-sum over classes by the log of
    the beta-posterior's mean of exp(change). The exponentials never overflow, and the
    transition at beta' reuses them. The elementwise work (rows x classes x hidden
    units) is in ``dtype``; sums over the hidden units are matrix-vector products.

    Parameters
    ----------
    view : ClassRBMView
    base_bias : ndarray of shape (n_features,)
        Biases a of the base model (entries beyond the features are ignored).
    n_chains : int
    rng : numpy.random.Generator
        Seeds the chains' own stream of random numbers.
    dtype : float32 or float64, default=float32
    """

    def __init__(self, view, base_bias, n_chains, rng, dtype=np.float32):
        dtype = np.dtype(dtype)
        self.dtype, self.n_chains = dtype, n_chains
        n_hidden, n_features = view.weights.shape
        self._weights_t = np.ascontiguousarray(np.asarray(view.weights).T, dtype=dtype)
        self._weights = np.ascontiguousarray(view.weights, dtype=dtype)
        self._hidden_bias = np.asarray(view.hidden_bias, dtype=dtype)
        self._class_rows = np.ascontiguousarray(np.asarray(view.class_weights).T, dtype=dtype)
        self._class_bias = np.asarray(view.class_bias, dtype=np.float64)
        self._base = np.asarray(base_bias, dtype=np.float64)[:n_features]
        self._visible_bias = np.asarray(view.visible_bias, dtype=np.float64)
        # sum_j (c_j + U_jk): the class part of sum_j O[k, j]
        self._class_offset = (np.asarray(view.class_weights, dtype=np.float64).sum(axis=0)
                              + np.asarray(view.hidden_bias, dtype=np.float64).sum())
        self._noise = Noise.seeded_from(rng)
        shape = (n_chains, view.n_classes, n_hidden)
        self._visible = np.empty((n_chains, n_features), dtype=dtype)
        self._inputs = np.empty(shape, dtype=dtype)  # O, then scratch
        self._abs = np.empty(shape, dtype=dtype)  # |O|
        self._positive = np.empty(shape, dtype=bool)  # O >= 0
        self._low = np.empty(shape, dtype=dtype)  # 1 + exp(-beta |O|)
        self._high = np.empty(shape, dtype=dtype)  # 1 + exp(-beta' |O|)
        self._ones = np.ones(n_hidden, dtype=dtype)
        self._one = np.asarray(1, dtype=dtype)
        self._rows = np.arange(n_chains)
        self._ready = None  # (beta, 1 + exp(-beta |O|), class log-scores at beta)

    @property
    def states(self):
        """The chains' feature vectors, shape (n_chains, n_features)."""
        return self._visible

    def start_from_base(self):
        """Draw every chain's state from the base model."""
        noise = self._noise.logistic(self._visible.shape)
        np.greater(self._base.astype(self.dtype), noise, out=self._visible)
        self._ready = None

    def set_states(self, X):
        """Start the chains at the feature rows ``X`` (one row per chain)."""
        self._visible[...] = X
        self._ready = None

    def _project(self):
        """|O| and the signs of O of the current states; returns sum_j O[n, k]
        (float64)."""
        feature_input = self._visible @ self._weights_t  # W x, (n_chains, n_hidden)
        np.add(feature_input[:, None, :], self._class_rows[None], out=self._inputs)
        self._inputs += self._hidden_bias
        np.abs(self._inputs, out=self._abs)
        np.greater_equal(self._inputs, 0, out=self._positive)
        row_sums = feature_input.sum(axis=1, dtype=np.float64)
        return row_sums[:, None] + self._class_offset

    def _one_plus_exp(self, beta, out):
        """``out = 1 + exp(-beta |O|)``."""
        np.multiply(self._abs, self.dtype.type(-beta), out=out)
        np.exp(out, out=out)
        out += self._one
        return out

    def _sum_hidden(self, values):
        """Sum over the hidden units of a (chains, classes, hidden) array, float64."""
        flat = values.reshape(-1, values.shape[-1])
        return np.dot(flat, self._ones).reshape(values.shape[:2]).astype(np.float64)

    def add_log_ratio(self, beta, beta_next, log_w, sign=1.0, then_sample_at=None):
        """``log_w += sign * (log p*_beta_next(x) - log p*_beta(x))`` for the states.

        ``then_sample_at`` (``beta`` or ``beta_next``) names the beta of the next
        :meth:`transition`, which then reuses this step's exponentials.
        """
        inputs_sum = self._project()
        step = beta_next - beta
        # sum_j max(O, 0) = (sum_j O + sum_j |O|) / 2
        positive_sums = 0.5 * (inputs_sum + self._sum_hidden(self._abs))
        low = self._one_plus_exp(beta, self._low)
        high = self._one_plus_exp(beta_next, self._high)
        log_low = self._sum_hidden(np.log(low, out=self._inputs))  # O is scratch now
        scores = beta * (self._class_bias + positive_sums) + log_low
        np.divide(high, low, out=self._inputs)
        change = step * (self._class_bias + positive_sums) + self._sum_hidden(
            np.log(self._inputs, out=self._inputs))
        # log sum_k exp(scores_k + change_k) - log sum_k exp(scores_k)
        shift = scores.max(axis=1, keepdims=True)
        weights = np.exp(scores - shift)
        top = change.max(axis=1, keepdims=True)
        increment = (np.log((weights * np.exp(change - top)).sum(axis=1))
                     - np.log(weights.sum(axis=1)) + top[:, 0])
        increment += step * (self._visible @ (self._visible_bias - self._base))
        if sign != 1.0:
            increment *= sign
        log_w += increment
        if then_sample_at == beta_next:
            self._ready = (beta_next, high, scores + change)
        elif then_sample_at == beta:
            self._ready = (beta, low, scores)
        else:
            self._ready = None

    def transition(self, beta):
        """One Gibbs step x -> (y, h) -> x of every chain at ``beta``."""
        if beta == 0:  # the base model: independent features
            self.start_from_base()
            return
        if self._ready is not None and self._ready[0] == beta:
            _, one_plus, scores = self._ready
        else:
            inputs_sum = self._project()
            positive_sums = 0.5 * (inputs_sum + self._sum_hidden(self._abs))
            one_plus = self._one_plus_exp(beta, self._low)
            scores = beta * (self._class_bias + positive_sums) + self._sum_hidden(
                np.log(one_plus, out=self._inputs))
        self._ready = None
        # y from p_beta(y | x)
        probability = scores - scores.max(axis=1, keepdims=True)
        np.exp(probability, out=probability)
        cumulative = np.cumsum(probability, axis=1)
        threshold = self._noise.uniform((self.n_chains, 1)) * cumulative[:, -1:]
        classes = np.minimum((cumulative < threshold).sum(axis=1), scores.shape[1] - 1)
        # h from p_beta(h | x, y): sigmoid(beta O) is 1 / (1 + exp(-beta |O|)) where
        # O >= 0 and its complement where O < 0; u (1 + exp(-beta |O|)) < 1 has the
        # probability 1 / (1 + exp(-beta |O|)).
        chosen = one_plus[self._rows, classes]
        positive = self._positive[self._rows, classes]
        chosen *= self._noise.uniform(chosen.shape)
        hidden = np.equal(chosen < 1, positive).astype(self.dtype)
        # x: beta (W^T h + b) + (1 - beta) a
        visible_input = (hidden @ self._weights) * self.dtype.type(beta)
        visible_input += (beta * self._visible_bias + (1.0 - beta) * self._base).astype(
            self.dtype)
        np.greater(visible_input, self._noise.logistic(self._visible.shape),
                   out=self._visible)
