"""Static files storage for production: compressed, hashed names, ES module imports rewritten."""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticStorage(CompressedManifestStaticFilesStorage):
    """WhiteNoise's compressed manifest storage that also rewrites ``import ... from './x.js'``
    to the hashed file names, so a browser never mixes module files of two deployments."""

    support_js_module_import_aggregation = True
