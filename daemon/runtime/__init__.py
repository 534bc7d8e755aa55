"""Domain services: the rules of AMP with no HTTP in them."""
