"""The reference-model tests' experiments: a small trace written beside
an experiment over it, as a dict or loaded."""
import yaml

from netsched.pipeline import experiment


def spec(tmp_path, trace, base, over):
    """``base`` (an experiment dict whose trace path is t.txt) with the
    keys ``over`` changed (None: removed); ``trace`` written to
    tmp_path/t.txt."""
    (tmp_path / 't.txt').write_text(trace)
    d = dict(base, **over)
    return {k: v for k, v in d.items() if v is not None}


def load(tmp_path, d):
    """The experiment ``d`` written to tmp_path/e.yaml and loaded."""
    p = tmp_path / 'e.yaml'
    p.write_text(yaml.safe_dump(d))
    return experiment.load(str(p))
