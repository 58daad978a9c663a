"""What inspect's ``inspect_ai`` entry point imports: the provider and trustlab's tasks."""

from trustlab.evals import misuse_stubs as misuse_stubs  # noqa: F401  (trustlab-stub/strong, /weak)
from trustlab.evals import provider as provider  # noqa: F401  (registers the trustlab provider)
from trustlab.evals.registry import load_builtin_tasks

load_builtin_tasks()  # registers trustlab's @task functions with inspect
