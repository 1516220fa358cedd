"""What the NVDP page computes without Streamlit (the report)."""
