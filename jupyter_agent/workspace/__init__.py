"""The workspace: which paths the agent may touch, the one gate every file is opened
through, and what writing to a path would set off (autorun files, git's redirects).
"""
