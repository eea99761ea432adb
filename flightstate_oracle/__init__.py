"""flightstate_oracle package."""
