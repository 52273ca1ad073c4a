"""The arena's web application: create_app, its route modules, the admin pages and `serve`."""
