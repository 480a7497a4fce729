"""creagraph.querygen"""
