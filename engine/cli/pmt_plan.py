"""placeholder"""
HELP = "plan"
def register(sub):
    sub.add_parser("pmt-plan", help=HELP)
