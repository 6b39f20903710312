"""Trainer glue for an ``rlsearch serve`` backend (verl and Search-R1).

Modules (Python 3 standard library plus ``requests``; verl and Search-R1 are
optional and never vendored):

- ``client``: HTTP client with retries (connection errors, timeouts, 429 and
  5xx, exponential back-off) and typed errors for 4xx.
- ``verl_program_tool``: ``RetrievalProgramTool``, a verl ``BaseTool`` that
  runs the policy's retrieval program on ``POST /v1/programs/execute``.
- ``rewards``: verl ``compute_score`` functions (per sample and batched) for
  the QA, RPL, Search-P1 and ProRetrieval rewards of ``POST /v1/rewards/*``.
- ``search_r1_hook``: ``<code>`` blocks next to ``<search>`` in Search-R1's
  ``LLMGenerationManager`` (``install()`` patches three methods).
- ``mutate_rollouts``: offline rollout dumps -> D_mut records through
  ``POST /v1/programs/mutate``.

See integrations/README.md.
"""
