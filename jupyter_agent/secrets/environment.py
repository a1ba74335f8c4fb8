"""Which environment a key set "in the environment" must be in, for this process.

A kernel the Jupyter server starts itself inherits the server's whole environment, so a
key exported before ``jupyter lab`` reaches the agent. A kernel a gateway starts (Jupyter
Kernel Gateway, Enterprise Gateway, behind ``jupyter lab --gateway-url``) does not: the
gateway gives it ``PATH``, the variables of its own process it lists in
``env_process_whitelist`` (``KG_ENV_PROCESS_WHITELIST``), its kernel spec's ``env``, and
of what the server sends only ``KERNEL_*`` and the names both sides allow
(``GatewayClient.allowed_envs`` on the server, ``env_whitelist`` on the gateway). Advice
about a missing key says which case this is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

JUPYTER_ENVIRONMENT = "the environment Jupyter starts in"


def gateway_kernel(environ: Mapping[str, str] | None = None) -> str | None:
    """The gateway that started this kernel, by the name users know (None: not one).

    Jupyter Kernel Gateway sets ``KERNEL_GATEWAY=1`` in its kernels' environment; the
    Jupyter server's gateway client sends ``KERNEL_WORKING_DIR`` with every kernel it asks
    a gateway for, and a kernel it starts itself gets ``JPY_SESSION_NAME`` instead.
    """
    env = os.environ if environ is None else environ
    if env.get("KERNEL_GATEWAY") == "1":
        return "Jupyter Kernel Gateway"
    if env.get("KERNEL_WORKING_DIR") and not env.get("JPY_SESSION_NAME"):
        return "a kernel gateway"
    return None


def key_environment(environ: Mapping[str, str] | None = None) -> str:
    """Where a variable holding a key must be set for this process to see it, as a noun
    phrase ("the environment Jupyter starts in", or the gateway's case)."""
    gateway = gateway_kernel(environ)
    if gateway is None:
        return JUPYTER_ENVIRONMENT
    return (
        f"the environment of {gateway}, listed in its env_process_whitelist "
        "(KG_ENV_PROCESS_WHITELIST), or the kernel spec's env there"
    )


def gateway_key_note(environ: Mapping[str, str] | None = None) -> str:
    """A sentence for advice about a missing key on a gateway's kernel ('' elsewhere): the
    environment Jupyter starts in does not reach this kernel, and what does."""
    gateway = gateway_kernel(environ)
    if gateway is None:
        return ""
    return (
        f"This kernel was started by {gateway}, so the environment Jupyter starts in does "
        "not reach it: set the key in the gateway's environment and list its name in the "
        "gateway's env_process_whitelist (KG_ENV_PROCESS_WHITELIST), or in the kernel "
        "spec's env on the gateway (a name the Jupyter server sends passes only if both its "
        "GatewayClient.allowed_envs and the gateway's env_whitelist allow it)."
    )
