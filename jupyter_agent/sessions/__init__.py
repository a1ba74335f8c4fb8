"""Sessions: the conversations on disk, their search index, and the view of a history
the model is sent.
"""
