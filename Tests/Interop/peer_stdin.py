"""The test peers' shared way to end with their parent: the parent (GQLTestSupport's ChildProcess) holds each peer's
standard input open and never writes to it, so end of file there means the parent is gone and the peer should stop.
"""
import asyncio
import os
import sys


def on_parent_gone(callback) -> None:
    """Calls `callback()` once, on the running event loop, when standard input reaches end of file. Standard input
    that cannot be watched (a regular file, none at all) is left alone: the peer then ends by signal only."""
    loop = asyncio.get_running_loop()
    descriptor = sys.stdin.fileno()

    def readable():
        try:
            chunk = os.read(descriptor, 4096)
        except OSError:
            chunk = b""
        if not chunk:
            loop.remove_reader(descriptor)
            callback()

    try:
        loop.add_reader(descriptor, readable)
    except (OSError, ValueError):
        pass
