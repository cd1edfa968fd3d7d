"""Build hook: the wheel carries the wasm components.

`pip install ./hosts/python` (after `make build`) copies the pipeline, the
default pack and the pack verifier from target/components (or from the
directory $RESULT_SANITIZER_COMPONENTS names) into the package's
`components/` directory as the wheel is built. Nothing is copied into the
source tree."""

import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# The pre-initialised pipeline when there is one (as the Rust host embeds).
PIPELINES = ("pipeline-warm.wasm", "pipeline.wasm")
REQUIRED = ("default-pack.wasm", "verifier.wasm")


class BuildWithComponents(build_py):
    def run(self):
        super().run()
        src = Path(os.environ.get("RESULT_SANITIZER_COMPONENTS") or HERE.parent.parent / "target" / "components")
        dst = Path(self.build_lib) / "result_sanitizer" / "components"
        dst.mkdir(parents=True, exist_ok=True)
        pipeline = next((src / p for p in PIPELINES if (src / p).exists()), None)
        missing = [n for n in REQUIRED if not (src / n).exists()]
        if pipeline is None or missing:
            names = ", ".join((["pipeline.wasm"] if pipeline is None else []) + missing)
            raise SystemExit(
                f"result-sanitizer: {names} missing in {src}: run `make build` at the repository root first "
                "(or set RESULT_SANITIZER_COMPONENTS to a directory holding them)"
            )
        for f in (pipeline, *(src / n for n in REQUIRED)):
            shutil.copyfile(f, dst / f.name)


setup(cmdclass={"build_py": BuildWithComponents})
