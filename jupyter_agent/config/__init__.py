"""Configuration: settings files, permission rules, project instructions, and the trust
a folder's settings wait for.
"""
