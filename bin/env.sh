# Sourced by the bin/ scripts: the project's Airflow and jsonbench environment. Safe to source twice.
# Everything lives inside the project folder unless the caller already set it.
JSONBENCH_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export JSONBENCH_HOME
export AIRFLOW_HOME="${AIRFLOW_HOME:-$JSONBENCH_HOME/.airflow}"
export AIRFLOW__CORE__DAGS_FOLDER="${AIRFLOW__CORE__DAGS_FOLDER:-$JSONBENCH_HOME/dags}"
export AIRFLOW__CORE__PLUGINS_FOLDER="${AIRFLOW__CORE__PLUGINS_FOLDER:-$JSONBENCH_HOME/plugins}"
export AIRFLOW__CORE__LOAD_EXAMPLES="${AIRFLOW__CORE__LOAD_EXAMPLES:-False}"
export AIRFLOW__CORE__UNIT_TEST_MODE="${AIRFLOW__CORE__UNIT_TEST_MODE:-False}"
# The DAG processor must not time out while importing pyarrow-free DAG files on a busy 2-core box.
export AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT="${AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT:-120}"
export AIRFLOW__CORE__DAG_FILE_PROCESSOR_TIMEOUT="${AIRFLOW__CORE__DAG_FILE_PROCESSOR_TIMEOUT:-180}"
# A benchmark host should not spend its CPU re-parsing an unchanged DAG file every 30 s while it measures:
# one parse costs the DAG processor about 4 CPU seconds (mostly importing Airflow in its parsing process).
export AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL="${AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL:-300}"
export AIRFLOW__DAG_PROCESSOR__PARSING_PROCESSES="${AIRFLOW__DAG_PROCESSOR__PARSING_PROCESSES:-1}"
export JSONBENCH_RESULTS_DIR="${JSONBENCH_RESULTS_DIR:-$JSONBENCH_HOME/results}"
export PYTHONPATH="$JSONBENCH_HOME/plugins${PYTHONPATH:+:$PYTHONPATH}"
VENV="$JSONBENCH_HOME/.venv"
export PATH="$VENV/bin:$PATH"
