"""Async, resumable execution of cases against a provider."""

from ctxprobe.runner.execute import Attempted, RunnerConfig, execute

__all__ = ["Attempted", "RunnerConfig", "execute"]
