"""creagraph.scoring"""
