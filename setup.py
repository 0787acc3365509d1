"""Build glue pyproject.toml cannot say: the wheel carries the top-level tools.d/ (the bundled
example tools, kept beside the package as the project's layout has them) inside the package, as
toolcall_cli/_bundled_tools, so a non-editable install finds them.

pyproject.toml can map a package onto tools.d only with a hand-kept list of every package,
which silently drops the next sub-package added; finding the packages here keeps that automatic.
"""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["toolcall_cli", "toolcall_cli.*"]),
        "toolcall_cli._bundled_tools",
    ],
    package_dir={"toolcall_cli._bundled_tools": "tools.d"},
)
