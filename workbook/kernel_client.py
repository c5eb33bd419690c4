"""A kernel client for executing notebooks that never loses a reply.

``jupyter_client``'s ``Session.send`` writes to an asyncio socket through a plain (blocking)
shadow of it. That raw send makes libzmq process the socket's pending commands, which clears
the socket's edge-triggered readiness signal; the asyncio wrapper, which did not see the send,
keeps waiting for a signal that has already been consumed. A reply that arrives in that moment
stays unread until the waiting poll times out.

nbclient sends on the shell channel while it waits there for a cell's reply: its stand-in for
the browser's Output widget sends the widget's new state back to the kernel on every output the
widget captures. So a cell that prints into an ``ipywidgets.Output`` can wait out the whole
per-cell timeout although the kernel replied at once (measured with ``tools/kernel_stress.py``:
about 1 cell in 11 of a print-into-Output loop; upstream: jupyter/jupyter_client#1059, open).

The fix is the one pyzmq applies after its own sends: read ``EVENTS`` through the asyncio socket,
which re-arms the wait when a message is already there. Used by ``make autograde`` (via
``nbgrader_config.py``) and by the tests' notebook executor.
"""
import zmq
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from traitlets import Type


class RearmingChannel(AsyncZMQSocketChannel):
    """An asyncio channel whose sends re-arm a poll waiting on the same socket."""

    def send(self, msg):
        super().send(msg)
        self.socket.get(zmq.EVENTS)      # pyzmq's asyncio socket schedules the wake-up if one is due


class KernelClient(AsyncKernelClient):
    """``AsyncKernelClient`` with re-arming shell, control and stdin channels."""

    shell_channel_class = Type(RearmingChannel)
    control_channel_class = Type(RearmingChannel)
    stdin_channel_class = Type(RearmingChannel)


# `c.AsyncKernelManager.client_class = CLIENT_CLASS` in a Jupyter config puts it in place.
CLIENT_CLASS = f"{__name__}.KernelClient"
