"""Where reviewer notices go: the channels a notice can be delivered through."""
