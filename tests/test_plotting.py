"""skboltz.plotting draws what it is given (checked on the artists) and needs matplotlib only when called."""

import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from skboltz.partition import LogZ  # noqa: E402
from skboltz.plotting import plot_filters, plot_history, plot_log_z, plot_samples  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _montage(fig):
    """The one image a tiled figure draws, as an array with NaN in the gaps."""
    (ax,) = fig.axes
    (image,) = ax.images
    return image, np.ma.filled(image.get_array().astype(float), np.nan)


def _tiles(fig, image_shape, n_cols):
    """The tiles of the montage, row by row, and the blank pixels between them."""
    image, montage = _montage(fig)
    height, width = image_shape
    tiles = [montage[top:top + height, left:left + width]
             for top in range(0, montage.shape[0], height + 1)
             for left in range(0, montage.shape[1], width + 1)]
    rows_in_tile = (np.arange(montage.shape[0]) % (height + 1)) < height
    cols_in_tile = (np.arange(montage.shape[1]) % (width + 1)) < width
    gaps = ~(rows_in_tile[:, None] & cols_in_tile[None, :])
    assert montage.shape[1] == n_cols * (width + 1) - 1
    return image, tiles, montage[gaps]


def test_filters_are_reshaped_rows_scaled_to_a_symmetric_range():
    rng = np.random.default_rng(0)
    components = rng.normal(size=(5, 12))
    fig = plot_filters(components, (3, 4), n_cols=2)
    image, tiles, gaps = _tiles(fig, (3, 4), n_cols=2)
    assert len(tiles) == 6  # 3 x 2 grid: five filters and one empty tile
    for row, tile in zip(components, tiles):
        np.testing.assert_allclose(tile, row.reshape(3, 4) / np.abs(row).max())
    assert np.isnan(tiles[5]).all() and np.isnan(gaps).all()
    assert image.get_clim() == (-1.0, 1.0)


def test_filters_accept_a_fitted_estimator_and_a_subset():
    class Fitted:
        components_ = np.arange(8 * 4, dtype=float).reshape(8, 4)

    _, tiles, _ = _tiles(plot_filters(Fitted(), (2, 2), n_filters=3), (2, 2), n_cols=2)
    assert len(tiles) == 4 and np.isnan(tiles[3]).all()
    np.testing.assert_allclose(tiles[2], np.array([[8, 9], [10, 11]]) / 11)


def test_an_all_zero_filter_stays_zero():
    _, tiles, _ = _tiles(plot_filters(np.zeros((2, 4)), (2, 2)), (2, 2), n_cols=2)
    np.testing.assert_array_equal(tiles[0], np.zeros((2, 2)))


def test_many_filters_are_one_image():
    components = np.random.default_rng(0).normal(size=(256, 64))
    fig = plot_filters(components, (8, 8))
    image, tiles, _ = _tiles(fig, (8, 8), n_cols=16)
    assert len(fig.axes) == 1 and image.get_array().shape == (16 * 9 - 1, 16 * 9 - 1)
    np.testing.assert_allclose(tiles[255], components[255].reshape(8, 8)
                               / np.abs(components[255]).max())


def test_samples_use_the_unit_range_and_keep_order():
    samples = np.eye(4)
    image, tiles, _ = _tiles(plot_samples(samples, (2, 2), title="samples"), (2, 2), 2)
    assert image.get_clim() == (0.0, 1.0)
    for row, tile in zip(samples, tiles):
        np.testing.assert_array_equal(tile, row.reshape(2, 2))


@pytest.mark.parametrize("shape", [(3, 3), (2, 5)])
def test_image_shape_must_match_the_features(shape):
    with pytest.raises(ValueError, match="pixels"):
        plot_samples(np.zeros((2, 8)), shape)


def test_history_panels_groups_and_missing_records():
    history = {
        "epoch": [1, 2, 3],
        "time": [0.1, 0.1, 0.1],
        "reconstruction_error": [0.3, 0.2, 0.1],
        "free_energy_train": [None, -20.0, -22.0],
        "free_energy_held_out": [None, -19.0, -18.0],
    }
    fig = plot_history(history, keys=["reconstruction_error",
                                      ("free_energy_train", "free_energy_held_out")])
    top, bottom = fig.axes
    (line,) = top.get_lines()
    np.testing.assert_array_equal(line.get_xdata(), [1, 2, 3])
    np.testing.assert_array_equal(line.get_ydata(), [0.3, 0.2, 0.1])
    train, held_out = bottom.get_lines()
    np.testing.assert_array_equal(train.get_xdata(), [2, 3])  # None skipped
    np.testing.assert_array_equal(held_out.get_ydata(), [-19.0, -18.0])
    assert [t.get_text() for t in bottom.get_legend().get_texts()] == [
        "free_energy_train", "free_energy_held_out"]


def test_history_default_keys_skip_bookkeeping():
    history = {"epoch": [1, 2], "time": [0.5, 0.5], "reconstruction_error": [0.2, 0.1]}
    fig = plot_history(history)
    assert [ax.get_ylabel() for ax in fig.axes] == ["reconstruction_error"]
    with pytest.raises(KeyError, match="log_likelihood"):
        plot_history(history, keys=["log_likelihood"])


def test_log_z_error_bars_bounds_and_exact_line():
    estimates = {
        "ais": [LogZ(10.0, std_error=0.1, method="ais"),
                LogZ(10.2, std_error=0.2, method="ais")],
        "mean_field": LogZ(9.5, lower=9.5, method="mean_field"),
        "exact": LogZ(10.1, lower=10.1, upper=10.1, method="exact"),
    }
    ax = plot_log_z(estimates, exact=10.1, n_sigma=2)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["ais", "mean_field", "exact"]
    # Error bars: vertical segments of half-width n_sigma * std_error around the value.
    segments = [collection.get_segments()[0] for collection in ax.collections]
    half_widths = sorted(round((seg[1][1] - seg[0][1]) / 2, 9) for seg in segments)
    assert half_widths == [0.0, 0.2, 0.4]
    markers = [line.get_marker() for line in ax.get_lines()]
    assert "^" in markers  # the one-sided (lower) bound
    exact_lines = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert len(exact_lines) == 1 and exact_lines[0].get_ydata()[0] == 10.1


def test_log_z_list_labels_by_method_and_draws_on_given_axes():
    _, ax = plt.subplots()
    returned = plot_log_z([LogZ(1.0, method="tap"), LogZ(2.0, std_error=0.5, method="ais")],
                          ax=ax)
    assert returned is ax
    assert [t.get_text() for t in ax.get_xticklabels()] == ["tap", "ais"]


def test_missing_matplotlib_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # import now fails
    with pytest.raises(ImportError, match=r"pip install matplotlib"):
        plot_samples(np.zeros((1, 4)), (2, 2))


def test_import_does_not_load_matplotlib():
    import subprocess

    code = ("import sys, skboltz.plotting; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
