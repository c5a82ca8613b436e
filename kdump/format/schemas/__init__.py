"""Generated schema tables (``tools/gen_schemas.py``): one data module per group of internal-topic records."""
