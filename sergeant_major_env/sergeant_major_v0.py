"""`sergeant_major_v0`: version 0 of the 3-5-8 PettingZoo environment (PettingZoo's naming).

```python
from sergeant_major_env import sergeant_major_v0

game = sergeant_major_v0.env(num_deals=2)      # with PettingZoo's standard wrappers
game = sergeant_major_v0.raw_env(num_deals=2)  # without them
```

`env` and `raw_env` are those of [`sergeant_major_env.aec`][] (documented there);
`sergeant_major_env.env` and `sergeant_major_env.raw_env` are aliases of the current
version. There is no `parallel_env`: 3-5-8 is turn-based, one seat decides at a time
(`metadata["is_parallelizable"]` is False).

The version number goes up when the rules' behaviour, the observation layout
(`observation.VERSION`, which model files record), the action ids or the rewards change
([`sergeant_major_env.versions.VERSION_RULE`][]; the history is
[`sergeant_major_env.versions.HISTORY`][]). The Gymnasium id of the single-seat env,
`SergeantMajor-v0`, carries the same number.
"""

from .aec import env, raw_env

VERSION = 0
"""The environment version this module names."""

__all__ = ["VERSION", "env", "raw_env"]
