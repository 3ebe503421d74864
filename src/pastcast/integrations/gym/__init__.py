"""The Gymnasium environment over forecast steps (the ``gym`` extra).

Importing this package registers ``pastcast/Forecast-v0``; ``gymnasium.make(
"pastcast.integrations.gym:pastcast/Forecast-v0", ...)`` imports it first by itself."""

from pastcast.integrations.gym._env import ForecastGymEnv, TextSpace, register_env

__all__ = ["ForecastGymEnv", "TextSpace"]

register_env()
