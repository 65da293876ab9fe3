# Sourced by the bin/ scripts: the project's Airflow and jsonbench environment. Safe to source twice.
# Everything lives inside the project folder unless the caller already set it.
JSONBENCH_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export JSONBENCH_HOME
# The defaults are said once, in plugins/jsonbench/environment.py (the jsonbench command applies the same ones).
eval "$("${PYTHON:-python3}" "$JSONBENCH_HOME/plugins/jsonbench/environment.py" --sh)"
export PYTHONPATH="$JSONBENCH_HOME/plugins${PYTHONPATH:+:$PYTHONPATH}"
VENV="$JSONBENCH_HOME/.venv"
export PATH="$VENV/bin:$PATH"
