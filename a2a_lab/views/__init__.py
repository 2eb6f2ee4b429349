"""What a person sees: thread views, charts and the notebook setup."""
