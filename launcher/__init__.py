"""The launcher of the dashboard (``python -m launcher.serve app.py``, used by ``run.sh``): not page code."""
