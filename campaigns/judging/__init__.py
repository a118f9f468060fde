"""LLM judges: the prompt and JSON Schema from the task schema, the endpoint client, outputs."""
