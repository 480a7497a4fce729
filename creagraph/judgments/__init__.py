"""creagraph.judgments"""
