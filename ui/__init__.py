"""Streamlit-side helpers shared by the pages (session state, sidebar). The engine never imports this."""
