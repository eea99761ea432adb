"""flightstate_pg package."""
