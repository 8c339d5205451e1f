"""The personal agent: graph, policies, memory and the factory that builds it.

Importing this package is cheap and switches every library we use to offline
mode before any of them loads (litellm's cost map, Chroma and onnxruntime
telemetry, the Hugging Face hub).
"""

from agent.offline import ensure_offline

ensure_offline()
