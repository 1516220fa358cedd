"""What the PMT page computes, without Streamlit: testable on its own (``tests/ui/``)."""
