"""Demo stand-in for scripts/_env_guard.py: the simulated GPU always passes."""


def configure_env(dtype: str = "bf16"):
    """Returns (ok, reason). The simulated H200 (SM 9.0) supports every dtype."""
    return True, ""
