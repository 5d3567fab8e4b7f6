"""Replacement policies written in Python.

A policy is a subclass of :class:`Policy`. flashbuf builds one instance per run, with the
number of frames of the buffer, and tells it every event of the run with the contract of the
Rust ``Replacer`` trait (``crates/policy/src/replacer.rs``):

* a hit on a buffered page: ``on_hit(frame, access)``;
* a miss: if no frame is free, ``victims(incoming)`` first; then the page is placed in a free
  frame and ``on_insert(frame, access)`` is called;
* ``remove(frame)``: the buffer dropped the page of ``frame`` for a reason of its own (the
  simulator never does; the storage engine may);
* ``len(policy)``: the number of frames the policy tracks.

Frames are ``0 .. capacity - 1``. An :class:`~flashbuf.Access` has ``page``, ``is_write`` and
``time`` (the request's 0-based position in the trace). The policy learns dirtiness from the
accesses: a write makes a frame dirty until the frame is evicted; the simulator keeps its own
dirty bits to decide write-backs, and with ``check=True`` compares them with
:meth:`Policy.is_dirty` after every request.

``victims`` returns the frames to evict: one frame number, a list of them (their dirty pages
are written in that order), or an :class:`Evictions` for block padding (``pad``) and bypass.
After it returns, the victims are no longer the policy's: forget them. Its answer is checked
before the buffer acts on it (a frame that holds no page, a frame named twice, no victim
without bypass, a padded block that leaves one of its buffered pages behind all stop the run
with :class:`~flashbuf.PolicyContractError`); an exception raised by any method stops the run
and is raised by :func:`flashbuf.run`.

Python policies are slow (every event is a Python call) but run through the same simulator
and devices as the built-in ones, so their counts compare exactly.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Optional, Sequence, Tuple, Union

if TYPE_CHECKING:  # pragma: no cover
    from ._native import Access

__all__ = ["Policy", "Evictions"]


@dataclass
class Evictions:
    """What one eviction decided (the Rust ``Evictions``).

    * ``victims``: frames to evict, in the order their dirty pages are written.
    * ``pad``: ``(first_page, pages)``: the victims are written as one whole flash block. The
      buffer walks the block's pages in order, writes every buffered page of it (clean or
      dirty), and reads then writes every page of the block that is not buffered (padding).
      ``first_page`` is a multiple of ``pages``; every victim's page lies in the block, and
      every buffered page of the block must be among the victims.
    * ``bypass``: the incoming page is not buffered: a write goes straight to the device, a
      read is served from it, and ``on_insert`` is not called. ``victims`` may then be empty.
    """

    victims: Sequence[int] = field(default_factory=list)
    pad: Optional[Tuple[int, int]] = None
    bypass: bool = False


class Policy(abc.ABC):
    """Base class of replacement policies written in Python (see the module documentation).

    Subclasses implement :meth:`on_hit`, :meth:`on_insert`, :meth:`victims`, :meth:`remove`
    and ``__len__``; :meth:`is_dirty` and :meth:`check_invariants` are optional. The
    constructor receives the number of frames; a subclass with parameters takes them as
    keyword arguments and is passed to :func:`flashbuf.run` through
    ``functools.partial(MyPolicy, w=0.5)``.

    Class attributes:

    * ``name``: the ``policy_name`` column of result rows (default: the class name);
    * ``block_pages``: pages of the flash block or cluster the policy reasons about, which
      renumbering keeps whole (``docs/address-space.md``), as the ``ppb`` parameter of the
      built-in block policies does.
    """

    name: ClassVar[Optional[str]] = None
    block_pages: ClassVar[Optional[int]] = None

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity

    @abc.abstractmethod
    def on_hit(self, frame: int, access: "Access") -> None:
        """``access.page``, buffered in ``frame``, was accessed again."""

    @abc.abstractmethod
    def on_insert(self, frame: int, access: "Access") -> None:
        """``access.page`` was just placed in the free frame ``frame`` after a miss."""

    @abc.abstractmethod
    def victims(self, incoming: "Access") -> Union[int, Sequence[int], Evictions]:
        """The buffer needs a free frame to bring in ``incoming``: name the victims."""

    @abc.abstractmethod
    def remove(self, frame: int) -> None:
        """Stop tracking ``frame`` (the buffer dropped its page)."""

    @abc.abstractmethod
    def __len__(self) -> int:
        """Number of frames tracked."""

    def is_dirty(self, frame: int) -> Optional[bool]:
        """The policy's view of whether ``frame`` is dirty, if it keeps one (``None``: it does
        not). With ``check=True`` the simulator compares it with its own after every request."""
        return None

    def check_invariants(self) -> Optional[str]:
        """Recounts the policy's state: return a message (or raise) on an inconsistency,
        ``None`` when all is well. Called after every request with ``check=True``."""
        return None
