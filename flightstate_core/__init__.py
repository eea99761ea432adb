"""flightstate_core package."""
