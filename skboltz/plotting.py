"""Figures for Boltzmann machines: weight filters, samples, training curves, log Z.

matplotlib is optional: it is imported only when a function here is called (install it
with ``pip install matplotlib``, or install skboltz with its ``plot`` extra, see
:ref:`install`). Every function draws with ``matplotlib.pyplot``
and returns the matplotlib ``Figure`` or ``Axes`` it drew on, so the result can be
saved, shown or decorated further.
"""

import math

import numpy as np

__all__ = ["plot_filters", "plot_history", "plot_log_z", "plot_samples"]

#: Keys of ``history_`` that are bookkeeping rather than curves worth plotting.
_NOT_CURVES = ("epoch", "time")


def _pyplot():
    """Import matplotlib.pyplot, or say how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(
            "skboltz.plotting needs matplotlib; install it with: pip install matplotlib "
            "(or, in a source checkout of skboltz: pip install -e \".[plot]\")"
        ) from error
    return plt


def _montage(images, image_shape, n_cols, gap=1):
    """Tile the images (one per row) into one 2-D array, NaN between and after tiles."""
    n_images = images.shape[0]
    n_rows = math.ceil(n_images / n_cols)
    height, width = image_shape
    montage = np.full((n_rows * (height + gap) - gap, n_cols * (width + gap) - gap), np.nan)
    for index, image in enumerate(images):
        row, col = divmod(index, n_cols)
        top, left = row * (height + gap), col * (width + gap)
        montage[top:top + height, left:left + width] = image.reshape(image_shape)
    return montage


def _image_grid(images, image_shape, *, n_cols, cmap, limits, title, tile_size):
    """A figure showing the images as one tiled image drawn with ``limits=(vmin, vmax)``.

    One ``imshow`` of a montage, not one axes per image: drawing hundreds of axes takes
    seconds, one image a fraction of a second. The gaps between tiles are NaN, drawn in
    the background colour.
    """
    plt = _pyplot()
    images = np.asarray(images, dtype=np.float64)
    if images.ndim != 2:
        raise ValueError(
            f"Expected a 2-D array of shape (n_images, n_features), got shape {images.shape}."
        )
    image_shape = tuple(int(n) for n in image_shape)
    if math.prod(image_shape) != images.shape[1]:
        raise ValueError(
            f"image_shape={image_shape} has {math.prod(image_shape)} pixels but each row "
            f"has {images.shape[1]} values."
        )
    n_images = images.shape[0]
    if n_images == 0:
        raise ValueError("Nothing to plot: got 0 images.")
    if n_cols is None:
        n_cols = math.ceil(math.sqrt(n_images))
    n_cols = max(1, min(int(n_cols), n_images))
    n_rows = math.ceil(n_images / n_cols)
    height, width = image_shape
    inches_per_pixel = tile_size / (max(height, width) + 1)  # a tile and its gap
    top_margin = 0.5 if title else 0.1
    fig = plt.figure(figsize=(inches_per_pixel * n_cols * (width + 1) + 0.2,
                              inches_per_pixel * n_rows * (height + 1) + 0.1 + top_margin))
    fig_width, fig_height = fig.get_size_inches()
    ax = fig.add_axes((0.1 / fig_width, 0.1 / fig_height, 1 - 0.2 / fig_width,
                       1 - (0.1 + top_margin) / fig_height))
    ax.set_axis_off()
    vmin, vmax = limits
    ax.imshow(_montage(images, image_shape, n_cols), cmap=cmap, vmin=vmin, vmax=vmax,
              interpolation="nearest")
    if title:
        fig.suptitle(title)
    return fig


def plot_filters(components, image_shape, *, n_filters=None, n_cols=None, cmap="RdBu_r",
                 title=None, tile_size=0.9):
    """Show the weights of each hidden unit as an image tile.

    Each tile is scaled by its own largest absolute weight, so weak and strong filters
    are equally readable; zero is the middle colour of the map. All tiles are drawn as
    one image, so hundreds of filters draw in a fraction of a second.

    Parameters
    ----------
    components : array-like of shape (n_components, n_features) or fitted estimator
        Weight matrix, one row per hidden unit, e.g. ``rbm.components_``; a fitted
        estimator with a ``components_`` attribute is accepted too.
    image_shape : tuple of int
        (height, width) of one image; ``height * width`` must equal ``n_features``.
    n_filters : int or None, default=None
        Show only the first ``n_filters`` rows; None shows all of them.
    n_cols : int or None, default=None
        Tiles per row; None makes the grid roughly square.
    cmap : str, default="RdBu_r"
        Matplotlib colour map (a diverging one suits signed weights).
    title : str or None, default=None
        Figure title.
    tile_size : float, default=0.9
        Size of one tile in inches.

    Returns
    -------
    fig : matplotlib.figure.Figure
        The figure: one axes holding one image, the tiles separated by one blank pixel.
        Tile ``k`` shows ``components[k] / max(abs(components[k]))`` on the colour
        range [-1, 1].

    See Also
    --------
    plot_samples : The same tiling for visible states (values in [0, 1]).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skboltz import RBM
    >>> from skboltz.plotting import plot_filters
    >>> X = load_digits().data / 16
    >>> rbm = RBM(n_components=16, n_iter=2, random_state=0).fit(X)
    >>> fig = plot_filters(rbm, (8, 8), title="RBM filters")
    >>> fig.axes[0].images[0].get_array().shape  # 4 x 4 tiles of 8 x 8, 1-pixel gaps
    (35, 35)
    """
    components = getattr(components, "components_", components)
    components = np.asarray(components, dtype=np.float64)
    if n_filters is not None:
        components = components[:n_filters]
    if components.ndim == 2:
        bounds = np.max(np.abs(components), axis=1, keepdims=True, initial=0.0)
        components = components / np.where(bounds > 0, bounds, 1.0)
    return _image_grid(components, image_shape, n_cols=n_cols, cmap=cmap,
                       limits=(-1.0, 1.0), title=title, tile_size=tile_size)


def plot_samples(samples, image_shape, *, n_cols=None, cmap="gray_r", title=None,
                 tile_size=0.9):
    """Show visible vectors (samples, data or reconstructions) as a grid of images.

    Parameters
    ----------
    samples : array-like of shape (n_samples, n_features)
        Rows with values in [0, 1], e.g. from ``model.sample(n)``.
    image_shape : tuple of int
        (height, width) of one image; ``height * width`` must equal ``n_features``.
    n_cols : int or None, default=None
        Images per row; None makes the grid roughly square.
    cmap : str, default="gray_r"
        Matplotlib colour map; 0 maps to its first colour and 1 to its last.
    title : str or None, default=None
        Figure title.
    tile_size : float, default=0.9
        Size of one image in inches.

    Returns
    -------
    fig : matplotlib.figure.Figure
        The figure: one axes holding one image, the tiles separated by one blank pixel.

    See Also
    --------
    plot_filters : The same tiling for signed weights.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skboltz.plotting import plot_samples
    >>> X = load_digits().data / 16
    >>> fig = plot_samples(X[:10], (8, 8), n_cols=5, title="Training digits")
    >>> fig.axes[0].images[0].get_array().shape  # 2 x 5 tiles of 8 x 8, 1-pixel gaps
    (17, 44)
    """
    return _image_grid(samples, image_shape, n_cols=n_cols, cmap=cmap,
                       limits=(0.0, 1.0), title=title, tile_size=tile_size)


def _as_curve(values):
    """Float array from a list that may hold None (a record not taken that epoch)."""
    return np.array([np.nan if value is None else value for value in values], dtype=float)


def plot_history(history, keys=None, *, x="epoch", logy=False, title=None):
    """Plot training records per epoch, one panel per key (or group of keys).

    Parameters
    ----------
    history : dict of lists or fitted estimator
        Per-epoch records such as an estimator's ``history_`` (a fitted estimator is
        accepted too). Entries that are None (not recorded that epoch) are skipped.
    keys : list of (str or tuple of str) or None, default=None
        What to plot. Each item is one panel; a tuple draws several keys on the same
        panel with a legend (e.g. training and held-out free energies). None plots
        every key except ``epoch`` and ``time``.
    x : str, default="epoch"
        Key used for the horizontal axis; when absent, 1, 2, ... is used.
    logy : bool, default=False
        Logarithmic vertical axes.
    title : str or None, default=None
        Figure title.

    Returns
    -------
    fig : matplotlib.figure.Figure
        The figure, one axes per panel, sharing the horizontal axis.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skboltz import RBM
    >>> from skboltz.plotting import plot_history
    >>> X = load_digits().data / 16
    >>> rbm = RBM(n_components=16, n_iter=3, random_state=0).fit(X)
    >>> fig = plot_history(rbm.history_, keys=["reconstruction_error"])
    >>> fig.axes[0].get_ylabel()
    'reconstruction_error'
    """
    plt = _pyplot()
    history = getattr(history, "history_", history)
    if keys is None:
        keys = [key for key in history if key not in _NOT_CURVES and key != x]
    if not keys:
        raise ValueError("Nothing to plot: no keys selected from the history.")
    panels = [tuple(key) if isinstance(key, (tuple, list)) else (key,) for key in keys]
    for panel in panels:
        for key in panel:
            if key not in history:
                raise KeyError(f"{key!r} is not in the history; it has {sorted(history)}.")
    n_points = len(history[panels[0][0]])
    x_values = _as_curve(history[x]) if x in history else np.arange(1, n_points + 1)
    fig, axes = plt.subplots(len(panels), 1, sharex=True, squeeze=False,
                             figsize=(6.4, 1.2 + 2.2 * len(panels)))
    for ax, panel in zip(axes[:, 0], panels):
        for key in panel:
            values = _as_curve(history[key])
            recorded = ~np.isnan(values)
            ax.plot(x_values[recorded], values[recorded], marker="o", markersize=3,
                    label=key)
        ax.set_ylabel(panel[0] if len(panel) == 1 else "value")
        if len(panel) > 1:
            ax.legend()
        if logy:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel(x if x in history else "epoch")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_log_z(estimates, exact=None, *, n_sigma=3.0, ax=None, title=None):
    """Compare log Z estimates, with their error bars or bounds, against a reference.

    A sampling estimate is drawn with its ``n_sigma`` standard-error bar; a deterministic
    estimate with bounds is drawn with its interval, a one-sided bound with a triangle
    pointing towards where the true value lies (``^``: a lower bound).

    Parameters
    ----------
    estimates : list of LogZ or dict of {str: LogZ or list of LogZ}
        The estimates. In a list each is labelled by its ``method``; in a dict by its
        key, and a list value puts repeated estimates (e.g. different seeds) side by side
        under one label.
    exact : float, LogZ or None, default=None
        The true log Z, drawn as a horizontal line.
    n_sigma : float, default=3.0
        Half-width of the error bars in standard errors.
    ax : matplotlib.axes.Axes or None, default=None
        Axes to draw on; None creates a new figure.
    title : str or None, default=None
        Axes title.

    Returns
    -------
    ax : matplotlib.axes.Axes
        The axes drawn on.

    Examples
    --------
    >>> from skboltz.partition import LogZ
    >>> from skboltz.plotting import plot_log_z
    >>> estimates = {
    ...     "sampled": LogZ(10.2, std_error=0.1, lower=9.9, upper=10.5, method="ais"),
    ...     "bound": LogZ(9.6, lower=9.6, method="mean_field"),
    ... }
    >>> ax = plot_log_z(estimates, exact=10.0)
    >>> [label.get_text() for label in ax.get_xticklabels()]
    ['sampled', 'bound']
    """
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    if isinstance(estimates, dict):
        groups = list(estimates.items())
    else:
        groups = [(getattr(estimate, "method", "") or f"#{i}", estimate)
                  for i, estimate in enumerate(estimates)]
    if not groups:
        raise ValueError("Nothing to plot: no estimates given.")
    for position, (_, group) in enumerate(groups):
        group = list(group) if isinstance(group, (list, tuple)) else [group]
        offsets = np.linspace(-0.2, 0.2, len(group)) if len(group) > 1 else [0.0]
        for offset, estimate in zip(offsets, group):
            _draw_estimate(ax, position + offset, estimate, n_sigma, f"C{position % 10}")
    if exact is not None:
        ax.axhline(float(exact), color="black", linestyle="--", linewidth=1, label="exact")
        ax.legend()
    ax.set_xticks(range(len(groups)), [str(label) for label, _ in groups])
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylabel("log Z")
    ax.grid(True, axis="y", alpha=0.3)
    if title:
        ax.set_title(title)
    return ax


def _draw_estimate(ax, x, estimate, n_sigma, color):
    """One estimate: error bar, interval, one-sided bound marker, or a bare point."""
    value = float(estimate)
    std_error = getattr(estimate, "std_error", None)
    lower = getattr(estimate, "lower", None)
    upper = getattr(estimate, "upper", None)
    if std_error is not None:
        half_width = n_sigma * float(std_error)
        ax.errorbar(x, value, yerr=half_width, fmt="o", color=color, capsize=4)
    elif lower is not None and upper is not None:
        ax.errorbar(x, value, yerr=[[value - lower], [upper - value]], fmt="o",
                    color=color, capsize=4)
    elif lower is not None:
        ax.plot(x, value, marker="^", color=color, markersize=9, linestyle="none")
    elif upper is not None:
        ax.plot(x, value, marker="v", color=color, markersize=9, linestyle="none")
    else:
        ax.plot(x, value, marker="o", color=color, linestyle="none")
