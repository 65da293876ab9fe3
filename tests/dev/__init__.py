"""The maintainers' instruments' tests (dev/jsonbench_dev): a tier of its own; the product's tests never import them."""
