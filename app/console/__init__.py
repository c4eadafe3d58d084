"""The operator's page: the service's state read once (`model`), then rendered as HTML (`html`, pure)."""
