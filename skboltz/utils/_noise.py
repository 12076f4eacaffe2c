"""Random numbers for training and sampling, drawn in blocks and handed out as views.

Training draws its noise in float32 whatever the model's dtype (``NOISE_DTYPE``), from
its own generator, a block at a time: per-minibatch draws would each pay numpy's call
overhead. The streams are a deterministic function of the generator's state, so a
training state that holds them can be pickled, copied and continued exactly.
"""

import copy
import math
from numbers import Integral

import numpy as np

#: Per float type: (unsigned int of the same size, random mantissa bits used, the bit
#: pattern of 1.0).
_FLOAT_BITS = {
    np.dtype(np.float32): (np.uint32, 23, 0x3F800000),
    np.dtype(np.float64): (np.uint64, 52, 0x3FF0000000000000),
}


def uniform_open(rng, n, dtype):
    """``n`` uniform numbers strictly inside (0, 1), in ``dtype``.

    Random mantissa bits under the exponent of 1.0 give a float in [1, 2) with no
    int-to-float conversion; subtracting 1 - 2**-(bits + 1) (exactly) centres each value
    in its bin, so neither 0 nor 1 occurs. Built on the generator's raw 64-bit output:
    about 3x cheaper here than ``Generator.random``.
    """
    uint, bits, one = _FLOAT_BITS[np.dtype(dtype)]
    n_words = -(-n * np.dtype(uint).itemsize // 8)
    raw = rng.bit_generator.random_raw(n_words).view(uint)[:n]
    raw >>= raw.itemsize * 8 - bits
    raw |= uint(one)
    u = raw.view(dtype)
    u -= 1 - 2.0 ** -(bits + 1)
    return u


def logistic_noise(rng, shape, dtype):
    """Standard logistic numbers L = log(u / (1 - u)) of the given shape (or count).

    ``x > L`` is a Bernoulli draw with probability sigmoid(x): one comparison samples
    binary units straight from their inputs, no sigmoid needed (and a unit with field
    f at temperature T turns on exactly when f > T * L).
    """
    # not np.prod: the streams ask for a count, once per block (every minibatch at
    # 784 x 500), and a numpy reduction of a Python int costs a few microseconds
    n = int(shape) if isinstance(shape, Integral) else math.prod(shape)
    u = uniform_open(rng, n, dtype)
    complement = np.subtract(1, u, dtype=u.dtype)
    u /= complement
    return np.log(u, out=u).reshape(shape)


def reciprocal_uniform_noise(rng, n, dtype):
    """``n`` numbers 1 / u with u uniform on (0, 1).

    ``1 + exp(-x) < 1 / u`` is a Bernoulli draw with probability sigmoid(x) =
    1 / (1 + exp(-x)): cheaper than logistic noise (no logarithm) where 1 + exp(-x) is
    computed anyway.
    """
    u = uniform_open(rng, n, dtype)
    return np.divide(1, u, out=u)  # np.reciprocal: the same bits, twice the time


#: Training noise is float32 whatever the model's dtype. A float32 and a float64 model
#: fitted with the same ``random_state`` then make the same draws (unless a unit's input
#: lies within float32 rounding of its threshold), and half the random bits are needed;
#: a probability resolution of 2**-23 is far below what any fit can tell apart.
NOISE_DTYPE = np.dtype(np.float32)


class _NoiseStream:
    """One kind of noise, handed out from blocks of at least ``block_size`` numbers.

    A block is a function of the generator's state before it was drawn, so a pickle
    keeps that state (a few hundred bytes) instead of the block, which is drawn again
    on first use after loading.
    """

    def __init__(self, make):
        self.make = make
        self.block = np.empty(0, dtype=NOISE_DTYPE)
        self.position = 0
        self.block_start = None  # (generator state before the block, block size)

    def __getstate__(self):  # pickling
        state = self.__dict__.copy()
        state["block"] = None
        return state

    def __copy__(self):  # copies in memory share the (read-only) block
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        return clone

    def take(self, rng, n, block_size):
        block = self.block
        if block is None:
            block = self.block = self._redraw(rng)
        end = self.position + n
        if end > block.size:
            # a whole number of takes: training takes equal sizes, and none is wasted
            size = n * max(1, block_size // n)
            self.block_start = (rng.bit_generator.state, size)
            block = self.block = self._draw(rng, size)
            end = n
        self.position = end
        return block[end - n : end]

    def _draw(self, rng, size):
        block = self.make(rng, size, NOISE_DTYPE)
        block.flags.writeable = False  # copies of the stream share it
        return block

    def _redraw(self, rng):
        if self.block_start is None:
            return np.empty(0, dtype=NOISE_DTYPE)
        state, size = self.block_start
        return self._draw(generator_at(rng, state), size)


def generator_at(rng, state):
    """A new Generator of ``rng``'s bit-generator type, set to the given state."""
    bit_generator = type(rng.bit_generator)(_REBUILD_SEED)
    bit_generator.state = state
    return np.random.Generator(bit_generator)


def copy_generator(rng):
    """An independent copy of a Generator, continuing its stream.

    Rebuilt from the bit generator's state: a quarter of what ``copy.deepcopy`` costs
    (which pickles it).
    """
    return generator_at(rng, rng.bit_generator.state)


#: Seeds a bit generator whose state is then overwritten (cheaper than OS entropy).
_REBUILD_SEED = np.random.SeedSequence(0)


def standard_normal_noise(rng, n, dtype):
    """``n`` standard normal numbers in ``dtype`` (Gaussian visible units' draws)."""
    return rng.standard_normal(n, dtype=dtype)


class Noise:
    """Buffered streams of logistic, reciprocal uniform, uniform and normal noise (float32).

    Drawing per minibatch costs a few microseconds of call overhead each time, so
    numbers are drawn about ``block_size`` at a time and handed out as views. The
    streams are a deterministic function of the generator, so they can be saved
    (pickled, deep-copied) with the training state and continued; a pickle holds the
    generator states the blocks were drawn from, not the blocks.
    """

    @classmethod
    def seeded_from(cls, rng, **kwargs):
        """Noise on its own SFC64 generator seeded from ``rng``.

        SFC64's raw output costs about two thirds of PCG64's (numpy's default), and the
        raw bits are a third of the cost of the noise.
        """
        seed = int(rng.integers(np.iinfo(np.int64).max))
        return cls(np.random.Generator(np.random.SFC64(seed)), **kwargs)

    def __init__(self, rng, block_size=2**16):
        self.rng = rng
        self.block_size = block_size
        self._logistic = _NoiseStream(logistic_noise)
        self._reciprocal_uniform = _NoiseStream(reciprocal_uniform_noise)
        self._uniform = _NoiseStream(uniform_open)
        self._normal = _NoiseStream(standard_normal_noise)

    def checkpoint(self):
        """Where the streams are now, for :meth:`restore`."""
        return self.rng.bit_generator.state, [vars(stream).copy() for stream in self._streams()]

    def restore(self, checkpoint):
        """Put the streams back where they were at ``checkpoint``."""
        state, streams = checkpoint
        self.rng.bit_generator.state = state
        for stream, saved in zip(self._streams(), streams):
            vars(stream).update(saved)

    def _streams(self):
        return self._logistic, self._reciprocal_uniform, self._uniform, self._normal

    def __deepcopy__(self, memo):
        # The blocks are read-only once drawn, so a copy shares them.
        clone = copy.copy(self)
        memo[id(self)] = clone
        if id(self.rng) not in memo:
            memo[id(self.rng)] = copy_generator(self.rng)
        clone.rng = memo[id(self.rng)]
        clone._logistic = copy.copy(self._logistic)
        clone._reciprocal_uniform = copy.copy(self._reciprocal_uniform)
        clone._uniform = copy.copy(self._uniform)
        clone._normal = copy.copy(self._normal)
        return clone

    def logistic(self, shape):
        """The next logistic numbers, as an array of ``shape`` (a view into a block)."""
        n_rows, n_columns = shape
        return self._logistic.take(self.rng, n_rows * n_columns, self.block_size).reshape(
            shape
        )

    def reciprocal_uniform(self, shape):
        """The next numbers 1 / u, u uniform on (0, 1), as an array of ``shape``."""
        n_rows, n_columns = shape
        return self._reciprocal_uniform.take(
            self.rng, n_rows * n_columns, self.block_size
        ).reshape(shape)

    def uniform(self, shape):
        """The next numbers uniform on (0, 1), as an array of ``shape``."""
        n_rows, n_columns = shape
        return self._uniform.take(self.rng, n_rows * n_columns, self.block_size).reshape(
            shape
        )

    def normal(self, shape):
        """The next standard normal numbers, as an array of ``shape``."""
        n_rows, n_columns = shape
        return self._normal.take(self.rng, n_rows * n_columns, self.block_size).reshape(
            shape
        )
