# The envgym sandbox server (`envgym serve sandbox`, SandboxFusion-compatible). Built offline like the env
# server, FROM the same base image made from the host's Python. Build it with:  python -m envgym.server.images
ARG BASE=envgym-server-base:latest
FROM ${BASE}
COPY envgym /opt/envgym/envgym
COPY envs /opt/envgym/envs
COPY sandbox /opt/envgym/sandbox
COPY agents /opt/envgym/agents
ENV PYTHONPATH=/opt/envgym PYTHONUNBUFFERED=1
EXPOSE 8080
ENTRYPOINT ["python", "-m", "envgym", "serve", "sandbox"]
CMD ["--host", "0.0.0.0", "--port", "8080"]
