"""The REST API for researchers' scripts: campaigns, items, annotations, progress, exports."""
