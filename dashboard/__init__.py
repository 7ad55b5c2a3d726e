"""The Streamlit dashboard's shared UI modules (state and caching, widgets, charts).

The pages (``pages/*.py``) hold widgets and charts only; every number they show
is an aggregation of evalcore's per-query table.
"""
