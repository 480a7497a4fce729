"""creagraph.tig"""
