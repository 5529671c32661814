"""Tools the action role can call, confined to the workspace, and the approval rules around them."""
