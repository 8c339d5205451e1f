"""Environment switches that keep every library off the network."""

from __future__ import annotations

import os

OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOG": "ERROR",
    "ANONYMIZED_TELEMETRY": "False",
    "ORT_DISABLE_TELEMETRY": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "DO_NOT_TRACK": "1",
}


def ensure_offline() -> None:
    """Set the offline switches unless the user set them explicitly."""
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
