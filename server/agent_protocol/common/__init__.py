"""What every room of the door uses: its `Depends`, request bodies, names, wire JSON, views."""
