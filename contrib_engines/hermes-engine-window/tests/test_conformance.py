from hermes_core.testing.conformance import EngineConformance


class TestWindowEngine(EngineConformance):
    engine_name = "window"
