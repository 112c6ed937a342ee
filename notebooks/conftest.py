"""nbval settings for the executed notebooks."""


def pytest_collectstart(collector):
    # Plots are checked by eye in the rendered docs, not byte for byte: PNG
    # bytes change with matplotlib and font versions, the numbers do not.
    if collector.fspath and collector.fspath.ext == ".ipynb":
        collector.skip_compare += ("image/png", "text/html")
