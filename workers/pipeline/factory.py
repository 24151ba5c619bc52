"""The pipeline a worker or a batch run uses: ``CTXPRESS_PIPELINE_FACTORY``, else the modes
(and the combos of ``CTXPRESS_COMBOS_FILE`` and the ``auto`` mode: :mod:`workers.pipeline.combos`)."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from workers.core.settings import Settings, SettingsError
from workers.pipeline.combos import RoutedPipeline
from workers.pipeline.runner import Pipeline

__all__ = ["build_pipeline"]


def build_pipeline(settings: Settings) -> Pipeline:
    """The worker's pipeline: ``CTXPRESS_PIPELINE_FACTORY`` when set, else the built-in modes."""
    spec = settings.pipeline_factory.strip()
    if not spec:
        return RoutedPipeline(settings)
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise SettingsError(
            f"CTXPRESS_PIPELINE_FACTORY={spec!r} must look like module.path:function"
        )
    try:
        factory: Callable[[Settings], Pipeline] = getattr(
            importlib.import_module(module_name), attr
        )
    except (ImportError, AttributeError) as exc:
        raise SettingsError(f"CTXPRESS_PIPELINE_FACTORY={spec!r} cannot be loaded: {exc}") from exc
    pipeline = factory(settings)
    if not isinstance(pipeline, Pipeline):
        raise SettingsError(
            f"CTXPRESS_PIPELINE_FACTORY={spec!r} returned {type(pipeline).__name__}, not a Pipeline"
        )
    if settings.combos_file and not isinstance(pipeline, RoutedPipeline):
        raise SettingsError(
            f"CTXPRESS_COMBOS_FILE={settings.combos_file!r} needs a RoutedPipeline "
            f"(workers.pipeline.combos), and CTXPRESS_PIPELINE_FACTORY={spec!r} returned a "
            f"{type(pipeline).__name__}: build a RoutedPipeline there, or unset one of the two"
        )
    return pipeline
