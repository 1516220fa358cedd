"""What every page shares: session state and its URL, page chrome, the figure cache, the active data, presets, verdicts."""
